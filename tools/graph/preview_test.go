package graph

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWritePreviewShowsOperationAndIDs(t *testing.T) {
	p := writePreview("update_task_status", "Update task status")
	got, err := p(context.Background(), []byte(`{"task_id":"0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e","status":"Completed","n":1.50}`))
	require.NoError(t, err)
	require.Equal(t, "Change the task graph (Neo4j): Update task status (update_task_status)\nn: 1.50\nstatus: Completed\ntask_id: 0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e", got)
	_, err = p(context.Background(), []byte(`[`))
	require.Error(t, err)
}
