package session

import (
	"fmt"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
)

// The session's side of the incrementality analysis (package dataset):
// NOTICEs for CREATE and REFRESH, and the analysis of a view being created.

// blockerNotices sends one NOTICE per relevant blocker: the reason, where
// it is, and the fix as the hint (R-I9). A view with REFRESH POLICY FULL
// asked for full refreshes and is told nothing.
func (s *Session) blockerNotices(view string, policy string, va *dataset.Analysis) {
	if policy == string(parse.PolicyFull) {
		return
	}
	bs, _ := va.RelevantBlockers()
	for _, b := range bs {
		lead := fmt.Sprintf("materialized view \"%s\" cannot be refreshed incrementally until this is fixed", view)
		if b.Permanent {
			lead = fmt.Sprintf("materialized view \"%s\" can never be refreshed incrementally", view)
		}
		n := pgerror.Notice("%s: %s", lead, va.Describe(b))
		n.Hint = b.Fix
		s.notices = append(s.notices, n)
	}
}

// storedNotices sends the blocker NOTICEs of a stored view (after a
// refresh); a view that no longer binds is reported by the refresh itself.
func (s *Session) storedNotices(v *catalog.Table) {
	va, err := dataset.AnalyzeStored(s.cat, v, s.env)
	if err != nil {
		return
	}
	s.blockerNotices(v.Name, v.Dataset.Policy, va)
}

// analyzeNew analyses the query of a view being created (v is its
// descriptor, not yet in cat).
func (s *Session) analyzeNew(v *catalog.Table, q *parse.Statement, root plan.Node, sources []uint32) *dataset.Analysis {
	return dataset.Locate(s.cat, s.resolvePath(), q, refresh.Analyze(s.cat, v, root, sources))
}
