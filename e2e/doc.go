// Package e2e holds the black-box tests of the toolwarden binary: TestMain
// builds cmd/toolwarden once, and the tests drive that binary over stdio,
// HTTP and SSE, with real clients (the Python and TypeScript SDKs, Gemini
// CLI, Claude Code, Codex, the MCP Inspector, Chromium) and real services
// (Neo4j, MinIO, Redis, HAProxy, Hydra). The package has no non-test code
// besides this comment; README.md says what the tests need and how to run
// them.
package e2e
