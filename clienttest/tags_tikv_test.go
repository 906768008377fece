//go:build clients && tikv

package clienttest

// A suite built with -tags tikv builds mvserver with it too, so
// MVSERVER_TEST_STORE=tikvmock:// runs the clients against the TiKV engine.
func init() { mvBuildTags = "tikv" }
