package session

import (
	"math"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
)

// DefaultChangeRetention is how long VACUUM keeps change-feed records
// without RETAIN (R-T9: 7 days).
const DefaultChangeRetention = 168 * time.Hour

// vacuum runs VACUUM name [RETAIN n HOURS] (R-T9): the change-feed records
// of the versions committed before now − retention are dropped at commit.
// A refresh that needed them recomputes in full (or fails under REFRESH
// POLICY INCREMENTAL STRICT) and says why.
func (s *Session) vacuum(v *parse.Vacuum) (string, error) {
	if s.explicit {
		return "", pgerror.New(pgerror.ActiveSQLTransaction, "VACUUM cannot run inside a transaction block")
	}
	t, err := s.resolve(v.Name)
	if err != nil {
		return "", err
	}
	if t.Kind == catalog.KindView {
		return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a table", t.Name).WithPosition(v.Name.Pos)
	}
	retain := DefaultChangeRetention
	if v.RetainHours >= 0 {
		if v.RetainHours > math.MaxInt64/float64(time.Hour) {
			return "", pgerror.New(pgerror.InvalidParameterValue, "RETAIN %g HOURS is out of range", v.RetainHours)
		}
		retain = time.Duration(v.RetainHours * float64(time.Hour))
	}
	keptFrom, err := s.txn.VacuumChanges(storageID(t), s.eng.now().Add(-retain))
	if err != nil {
		return "", mapStorageErr(err)
	}
	version, err := s.txn.TableVersion(storageID(t))
	if err != nil {
		return "", mapStorageErr(err)
	}
	if keptFrom > version {
		s.notice("the change data feed of %s keeps no version: every version is older than the retention", s.cat.QualifiedName(t))
	} else {
		s.notice("the change data feed of %s keeps versions %d to %d", s.cat.QualifiedName(t), keptFrom, version)
	}
	return "VACUUM", nil
}
