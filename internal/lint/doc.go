// Package lint holds the project's lint checks as a test (STYLE.md "Lint as
// a test"): the import direction between packages of DESIGN.md, and go vet.
package lint
