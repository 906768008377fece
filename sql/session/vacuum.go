package session

import (
	"context"
	"math"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

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
	if err := s.requireOwner(t); err != nil {
		if v.RetainHours < 0 {
			// PostgreSQL's VACUUM name skips what the role does not own.
			s.warning(pgerror.Warning, "skipping \"%s\" --- only table or database owner can vacuum it", t.Name)
			return "VACUUM", nil
		}
		return "", err
	}
	// Only the RETAIN form reports what it kept; plain VACUUM is silent,
	// as PostgreSQL's is.
	return "VACUUM", s.vacuumTable(t, v.RetainHours, v.RetainHours >= 0)
}

// vacuumPG runs PostgreSQL's VACUUM [FULL] [FREEZE] [VERBOSE] [ANALYZE]
// [(options)] [table [, …]] and ANALYZE [VERBOSE] [table [(cols)], …]:
// VACUUM trims each table's change feed to the default retention (the
// FULL and FREEZE work PostgreSQL does has no counterpart here); VERBOSE
// reports what each kept. ANALYZE, alone or in VACUUM, collects the
// planner statistics (analyze.go).
func (s *Session) vacuumPG(ctx context.Context, vs *pg_query.VacuumStmt) (string, error) {
	tag, verb := "VACUUM", "vacuum"
	if !vs.IsVacuumcmd {
		tag, verb = "ANALYZE", "analyze"
	}
	// PostgreSQL's ANALYZE may run in a transaction block; VACUUM not.
	if s.explicit && vs.IsVacuumcmd {
		return "", pgerror.New(pgerror.ActiveSQLTransaction, "%s cannot run inside a transaction block", tag)
	}
	verbose, analyze := false, !vs.IsVacuumcmd
	for _, o := range vs.Options {
		if d := o.GetDefElem(); d != nil && (d.Defname == "verbose" || d.Defname == "analyze") {
			on := d.Arg == nil || d.Arg.GetBoolean().GetBoolval() || d.Arg.GetString_().GetSval() == "on"
			if d.Defname == "verbose" {
				verbose = on
			} else {
				analyze = analyze || on
			}
		}
	}
	var targets []analyzeTarget
	if len(vs.Rels) == 0 {
		for _, t := range s.cat.Tables() {
			if s.otherSessionsTemp(t) {
				continue // as PostgreSQL, VACUUM leaves them to their session
			}
			if t.Kind == catalog.KindTable || t.Kind == catalog.KindMaterializedView || t.Kind == catalog.KindStreamingTable {
				if s.requireOwner(t) != nil {
					s.warning(pgerror.Warning, "skipping \"%s\" --- only table or database owner can %s it", t.Name, verb)
					continue
				}
				targets = append(targets, analyzeTarget{t: t})
			}
		}
	}
	for _, r := range vs.Rels {
		vr := r.GetVacuumRelation()
		rv := vr.GetRelation()
		t, err := s.cat.Resolve(parse.RangeVarParts(rv), s.resolvePath())
		if err != nil {
			return "", err
		}
		cols, err := analyzeColumns(t, vr.GetVaCols(), analyze)
		if err != nil {
			return "", err
		}
		if t.Kind == catalog.KindView || t.Kind == catalog.KindSequence {
			s.warning(pgerror.Warning, "skipping \"%s\" --- cannot %s non-tables or special system tables", t.Name, verb)
			continue
		}
		if s.requireOwner(t) != nil {
			s.warning(pgerror.Warning, "skipping \"%s\" --- only table or database owner can %s it", t.Name, verb)
			continue
		}
		targets = append(targets, analyzeTarget{t: t, cols: cols})
	}
	if vs.IsVacuumcmd {
		for _, a := range targets {
			if err := s.vacuumTable(a.t, -1, verbose); err != nil {
				return "", err
			}
		}
	}
	if analyze {
		for _, a := range targets {
			if err := s.analyzeTable(ctx, a, verbose); err != nil {
				return "", err
			}
		}
	}
	return tag, nil
}

// vacuumTable trims t's change feed to retainHours (< 0: the default),
// reporting what it kept when report is set.
func (s *Session) vacuumTable(t *catalog.Table, retainHours float64, report bool) error {
	retain := DefaultChangeRetention
	if retainHours >= 0 {
		if retainHours > math.MaxInt64/float64(time.Hour) {
			return pgerror.New(pgerror.InvalidParameterValue, "RETAIN %g HOURS is out of range", retainHours)
		}
		retain = time.Duration(retainHours * float64(time.Hour))
	}
	keptFrom, err := s.txn.VacuumChanges(storageID(t), s.eng.now().Add(-retain))
	if err != nil {
		return mapStorageErr(err)
	}
	version, err := s.txn.TableVersion(storageID(t))
	if err != nil {
		return mapStorageErr(err)
	}
	if !report {
		return nil
	}
	if keptFrom > version {
		s.notice("the change data feed of %s keeps no version: every version is older than the retention", s.cat.QualifiedName(t))
	} else {
		s.notice("the change data feed of %s keeps versions %d to %d", s.cat.QualifiedName(t), keptFrom, version)
	}
	return nil
}
