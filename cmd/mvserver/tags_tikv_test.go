//go:build tikv

package main

// A test binary built with -tags tikv builds the server with it too, so
// MVSERVER_TEST_STORE=tikvmock:// can run its servers on the TiKV engine.
func init() { binTags = "tikv" }
