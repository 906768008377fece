package catalog

// KindSequence is a sequence (CREATE SEQUENCE, serial and identity
// columns): a named counter with no rows. Its value lives outside
// transactions (refresh/… never sees it); Sequence holds its options.
const KindSequence ObjectKind = "sequence"

// Sequence is a sequence's definition.
type Sequence struct {
	Type      string `json:"type"` // smallint, integer or bigint
	Start     int64  `json:"start"`
	Increment int64  `json:"increment"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Cache     int64  `json:"cache"`
	Cycle     bool   `json:"cycle,omitempty"`
	// OwnedBy is the table (and OwnedCol its column id) the sequence
	// belongs to — a serial column's — dropped with it; 0 for none.
	OwnedBy  uint32 `json:"owned_by,omitempty"`
	OwnedCol uint32 `json:"owned_col,omitempty"`
	// Epoch tells apart sequences that reuse an id after a rolled-back
	// CREATE: the counter is stored under (id, epoch).
	Epoch int64 `json:"epoch"`
}

// OwnedSequences lists the sequences owned by table id.
func (c *Catalog) OwnedSequences(id uint32) []*Table {
	var out []*Table
	for _, t := range c.Tables() {
		if t.Kind == KindSequence && t.Sequence != nil && t.Sequence.OwnedBy == id {
			out = append(out, t)
		}
	}
	return out
}
