// Package layers holds only a test: it reads the module's import graph
// with go list and fails when a package imports one it may not, so the
// one-way layering docs/architecture.md describes (cmd → mcpserver →
// guard → audit, tools/* → sandbox, everything → internal leaves) is
// checked, not hoped for. The allowed arrows are written in one table, in layers_test.go.
package layers
