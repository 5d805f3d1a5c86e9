// Package layers holds only a test: it reads the module's import graph
// with go list and fails when a package imports one it may not, so the
// one-way layering STYLE.md describes (cmd → mcpserver, bridge → guard,
// tools/* → sandbox, configs → the leaf packages) is checked, not hoped
// for. The allowed arrows are written in one table, in layers_test.go.
package layers
