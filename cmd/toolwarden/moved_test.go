package main

import "github.com/toolwarden/toolwarden/mcpserver"

// The black-box tests of the binary (*_e2e_test.go) still name these
// package main identifiers, which moved to mcpserver with the process
// wiring; they are here, for those tests only, until the tests move out
// of package main and name mcpserver's directly.
const serverGCPercent = mcpserver.ServerGCPercent

type (
	effective   = mcpserver.Effective
	explanation = mcpserver.Explanation
)
