package logictest

import (
	"flag"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected results of the logic tests in place")

// testdataDir is the repository's testdata directory.
const testdataDir = "../testdata"

func logicFiles(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(testdataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".slt") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no *.slt files under %s", testdataDir)
	}
	return files
}

// TestLogic runs every testdata/**/*.slt file twice, each time on a fresh
// server: once through the simple protocol, once through the extended one.
func TestLogic(t *testing.T) {
	for _, path := range logicFiles(t) {
		name := strings.TrimSuffix(filepath.ToSlash(strings.TrimPrefix(path, testdataDir+string(filepath.Separator))), ".slt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if *rewrite {
				if !t.Run("rewrite", func(t *testing.T) { RewriteFile(t, path) }) {
					return
				}
			}
			for _, proto := range []Protocol{Simple, Extended} {
				t.Run(proto.String(), func(t *testing.T) {
					t.Parallel()
					RunFile(t, path, proto)
				})
			}
		})
	}
}
