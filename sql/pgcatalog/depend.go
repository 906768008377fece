package pgcatalog

import (
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/parse"
)

// extMvserver is the OID of pg_extension's one row, "mvserver": the
// system schema and its views (refresh_history, mv_insights, …) are its
// members. PostgreSQL's own built-in objects are told apart the same
// way; pg_dump skips an extension whose OID is below 16384 (as it does
// plpgsql) and every member of one, so a dump holds the user's objects
// only and restores into PostgreSQL.
const extMvserver = 13002

// PostgreSQL's OIDs of the catalogs pg_depend rows name.
const (
	classPgExtension = 3079
	classPgAttrdef   = 2604
)

func init() {
	generators["pg_catalog.pg_extension"] = func(v *View, b *builder) {
		b.add(vals{"oid": uint32(extMvserver), "extname": "mvserver", "extowner": v.ownerOID(), "extnamespace": uint32(nsSystem),
			"extversion": "1.0"})
	}
	// pg_depend: what pg_dump orders its output by and tells owned
	// sequences by. A view or materialized view depends ('n') on each
	// relation its query reads (PostgreSQL routes this through the view's
	// pg_rewrite rule; the order it gives is the same); a serial column's
	// sequence is owned ('a') and an identity column's internal ('i');
	// the system schema and views are members ('e') of extension
	// mvserver; a column default depends ('n') on the sequences its
	// nextval names, so that a dump creates them first.
	generators["pg_catalog.pg_depend"] = func(v *View, b *builder) {
		dep := func(classid, objid, refclassid, refobjid uint32, refobjsubid int16, deptype string) {
			b.add(vals{"classid": classid, "objid": objid, "objsubid": int32(0), "refclassid": refclassid, "refobjid": refobjid,
				"refobjsubid": int32(refobjsubid), "deptype": deptype})
		}
		dep(classPgNamespace, nsSystem, classPgExtension, extMvserver, 0, "e")
		for _, t := range catalog.SystemViews() {
			dep(classPgClass, t.ID, classPgExtension, extMvserver, 0, "e")
		}
		for _, t := range v.Cat.Tables() {
			switch {
			case t.Kind == catalog.KindView || t.Kind == catalog.KindMaterializedView:
				for _, id := range t.DependsOn {
					dep(classPgClass, t.ID, classPgClass, id, 0, "n")
				}
			case t.Kind == catalog.KindSequence && t.Sequence != nil && t.Sequence.OwnedBy != 0:
				owner, ok := v.Cat.Table(t.Sequence.OwnedBy)
				if !ok {
					continue
				}
				col := owner.ColumnByID(t.Sequence.OwnedCol)
				kind := "a"
				if col >= 0 && owner.Columns[col].Identity != 0 {
					kind = "i"
				}
				dep(classPgClass, t.ID, classPgClass, owner.ID, int16(col+1), kind)
			default:
				for i, c := range t.Columns {
					if c.Default == "" || c.Identity != 0 || c.Generated != "" || !strings.Contains(c.Default, "val(") {
						continue
					}
					for _, name := range parse.SequenceNames(c.Default) {
						if seq := v.sequenceNamed(name, t.SchemaID); seq != nil {
							dep(classPgAttrdef, attrDefOID(t.ID, uint32(i+1)), classPgClass, seq.ID, 0, "n")
						}
					}
				}
			}
		}
	}
}

// sequenceNamed is the sequence a nextval literal names: schema.name, or
// a bare name (as qualify.go resolves one).
func (v *View) sequenceNamed(lit string, home uint32) *catalog.Table {
	if schema, name, ok := strings.Cut(lit, "."); ok {
		s, ok := v.Cat.Schema(schema)
		if !ok {
			return nil
		}
		t, ok := v.Cat.LookupTable(s.ID, name)
		if !ok || t.Kind != catalog.KindSequence {
			return nil
		}
		return t
	}
	return v.nameTarget(lit, true, nil, home)
}
