package graph

// The queries, for the benchmarks that run them with the bare driver.
const (
	GetTaskCypher      = getTaskCypher
	UpdateStatusCypher = updateStatusCypher
)
