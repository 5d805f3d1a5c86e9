package exec

// GoEnv is the Go environment of go scripts with GOCACHE at cache, for
// other sandboxed Go runs (declared tools) that share the prepared cache.
func GoEnv(goRoot, cache string) []string { return goEnv(goRoot, cache) }
