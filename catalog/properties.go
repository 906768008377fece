package catalog

import (
	"sort"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

// Table feature properties (R-T5).
const (
	PropChangeDataFeed  = "delta.enableChangeDataFeed"
	PropRowTracking     = "delta.enableRowTracking"
	PropDeletionVectors = "delta.enableDeletionVectors"
)

// deltaKeys are the delta.* keys mvserver knows, in their canonical
// spelling; the value says whether the key is a boolean. The three feature
// keys change behaviour; the others are accepted and kept, as Databricks
// users set them in shared DDL.
var deltaKeys = map[string]bool{
	PropChangeDataFeed:                    true,
	PropRowTracking:                       true,
	PropDeletionVectors:                   true,
	"delta.appendOnly":                    true,
	"delta.autoOptimize.optimizeWrite":    true,
	"delta.autoOptimize.autoCompact":      true,
	"delta.logRetentionDuration":          false,
	"delta.deletedFileRetentionDuration":  false,
	"delta.columnMapping.mode":            false,
	"delta.minReaderVersion":              false,
	"delta.minWriterVersion":              false,
	"delta.checkpointInterval":            false,
	"delta.dataSkippingNumIndexedCols":    false,
	"delta.targetFileSize":                false,
	"delta.tuneFileSizesForRewrites":      true,
	"delta.isolationLevel":                false,
	"delta.enableTypeWidening":            true,
	"delta.checkpoint.writeStatsAsJson":   true,
	"delta.checkpoint.writeStatsAsStruct": true,
	"delta.randomizeFilePrefixes":         true,
}

// Defaults are the feature values new tables get (R-T5: all on unless the
// server flag changes them).
type Defaults struct {
	ChangeDataFeed, RowTracking, DeletionVectors bool
}

// AllOn is the default of R-T5.
var AllOn = Defaults{ChangeDataFeed: true, RowTracking: true, DeletionVectors: true}

// NormalizeProperty validates one property: delta.* keys must be known and
// get their canonical spelling; boolean values are normalised to true/false.
func NormalizeProperty(key, value string) (Property, error) {
	if strings.HasPrefix(strings.ToLower(key), "delta.") {
		for k, isBool := range deltaKeys {
			if strings.EqualFold(k, key) {
				if isBool {
					switch strings.ToLower(value) {
					case "true":
						value = "true"
					case "false":
						value = "false"
					default:
						return Property{}, pgerror.New(pgerror.InvalidParameterValue, "invalid value \"%s\" for table property %s: expected true or false", value, k)
					}
				}
				return Property{Key: k, Value: value}, nil
			}
		}
		return Property{}, pgerror.New(pgerror.InvalidParameterValue, "unknown table property \"%s\"", key).
			WithHint("Known delta.* properties: %s. Keys outside delta.* are kept as user metadata.", strings.Join(knownKeys(), ", "))
	}
	return Property{Key: key, Value: value}, nil
}

func knownKeys() []string {
	var ks []string
	for k := range deltaKeys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// SetProperty sets (or replaces, case-insensitively) a property on t.
func (t *Table) SetProperty(p Property) {
	for i := range t.Properties {
		if strings.EqualFold(t.Properties[i].Key, p.Key) {
			t.Properties[i] = p
			return
		}
	}
	t.Properties = append(t.Properties, p)
}

// UnsetProperty removes a property; it reports whether it existed.
func (t *Table) UnsetProperty(key string) bool {
	for i := range t.Properties {
		if strings.EqualFold(t.Properties[i].Key, key) {
			t.Properties = append(t.Properties[:i], t.Properties[i+1:]...)
			return true
		}
	}
	return false
}

// ApplyDefaults sets the feature properties a new table gets unless the
// CREATE statement set them.
func (t *Table) ApplyDefaults(d Defaults) {
	for _, kv := range []struct {
		k string
		v bool
	}{{PropChangeDataFeed, d.ChangeDataFeed}, {PropRowTracking, d.RowTracking}, {PropDeletionVectors, d.DeletionVectors}} {
		if _, ok := t.Property(kv.k); !ok {
			v := "false"
			if kv.v {
				v = "true"
			}
			t.SetProperty(Property{Key: kv.k, Value: v})
		}
	}
}
