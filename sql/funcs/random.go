package funcs

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"

	"github.com/mvserver/mvserver/sql/types"
)

// Non-deterministic functions (R-Q3): each call gives a new value, so a view
// that uses them cannot be maintained incrementally (R-I2).
func init() {
	random := &Func{Name: "random", Deterministic: false, Overloads: []*Overload{{Ret: ret(types.Float8),
		Fn: func(*Ctx, []types.Datum) (types.Datum, error) { return types.NewFloat8(mrand.Float64()), nil }}}}
	register(random)
	registry["rand"] = &Func{Name: "rand", Deterministic: false, Overloads: random.Overloads}
	uuid := &Func{Name: "uuid", Deterministic: false, Overloads: []*Overload{{Ret: ret(types.Text),
		Fn: func(*Ctx, []types.Datum) (types.Datum, error) {
			var b [16]byte
			_, _ = rand.Read(b[:])
			b[6] = b[6]&0x0f | 0x40 // version 4
			b[8] = b[8]&0x3f | 0x80 // variant 10
			return types.NewText(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])), nil
		}}}}
	register(uuid)
	registry["gen_random_uuid"] = &Func{Name: "gen_random_uuid", Deterministic: false, Overloads: uuid.Overloads}
}
