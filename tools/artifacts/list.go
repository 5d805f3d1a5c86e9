package artifacts

import (
	"context"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/toolwarden/toolwarden/internal/artifactkey"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// ListIn is list_artifacts' input.
type ListIn struct {
	TaskID string `json:"task_id" jsonschema:"UUID of the task, in canonical lower-case form"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page; leave out for the first page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Most artifacts to return (default 100, at most artifacts.max_list_results)"`
}

// ArtifactInfo is one listed artifact.
type ArtifactInfo struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	URI      string `json:"uri"`
	Size     int64  `json:"size" jsonschema:"Size in bytes"`
	Modified string `json:"modified" jsonschema:"Last modification time, RFC 3339"`
}

// ListOut is list_artifacts' output.
type ListOut struct {
	TaskID     string         `json:"task_id"`
	Artifacts  []ArtifactInfo `json:"artifacts" jsonschema:"The artifacts, by name"`
	Truncated  bool           `json:"truncated" jsonschema:"True when more artifacts follow; call again with cursor=next_cursor"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

const listDesc = `List the artifacts stored for a task, by name.

When to use: to find out which files a task has produced before retrieving one with retrieve_artifact, or to check that a name is free before store_artifact.

Parameters:
- task_id (required): the task's UUID in canonical lower-case form.
- cursor: next_cursor from the previous page.
- limit: most artifacts per page (default 100, at most artifacts.max_list_results).

Returns: task_id, artifacts (name, key, uri, size, modified, sorted by name), truncated and next_cursor. A task with no artifacts, or unknown to the store, gives an empty list.

Errors: invalid_argument for a bad task_id, cursor or limit; backend.unavailable when the store cannot be reached (try again later); backend.denied when the store refuses the server's credentials.

Side effects: none (read-only).

Example: {"task_id": "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e", "limit": 50}`

const defaultListLimit = 100

func (s *Store) listArtifacts() tools.Tool {
	return tools.New("list_artifacts", listDesc,
		tools.Annotations{Title: "List task artifacts", ReadOnly: true, Idempotent: true}, readMeta, s.list)
}

func (s *Store) list(ctx context.Context, in ListIn) (ListOut, error) {
	id, err := artifactkey.TaskID(in.TaskID)
	if err != nil {
		return ListOut{}, err
	}
	limit, err := s.pageSize(in.Limit)
	if err != nil {
		return ListOut{}, err
	}
	prefix := artifactkey.TaskPrefix(id)
	opts := minio.ListObjectsOptions{Prefix: prefix, MaxKeys: limit + 1}
	if in.Cursor != "" {
		if err := artifactkey.CheckName(in.Cursor); err != nil {
			return ListOut{}, toolerr.New(toolerr.InvalidArgument, "Pass next_cursor exactly as the previous page returned it.",
				"cursor is not a next_cursor value").WithRule("artifacts.cursor")
		}
		opts.StartAfter = prefix + in.Cursor
	}
	out := ListOut{TaskID: id, Artifacts: []ArtifactInfo{}}
	err = s.objects.List(ctx, opts, func(obj minio.ObjectInfo) bool {
		name := strings.TrimPrefix(obj.Key, prefix)
		if artifactkey.CheckName(name) != nil {
			return true // not made by store_artifact: never shown
		}
		if len(out.Artifacts) == limit {
			out.Truncated, out.NextCursor = true, out.Artifacts[limit-1].Name
			return false
		}
		out.Artifacts = append(out.Artifacts, ArtifactInfo{Name: name, Key: obj.Key, URI: artifactkey.URI(id, name), Size: obj.Size,
			Modified: obj.LastModified.UTC().Format(time.RFC3339)})
		return true
	})
	if err != nil {
		return ListOut{}, s.storeError(err, "list_artifacts", id, "")
	}
	return out, nil
}

func (s *Store) pageSize(n int) (int, error) {
	switch {
	case n == 0:
		return min(defaultListLimit, s.limits.MaxListResults), nil
	case n < 0 || n > s.limits.MaxListResults:
		return 0, toolerr.New(toolerr.InvalidArgument, "Use a limit between 1 and artifacts.max_list_results.",
			"limit %d is not between 1 and %d", n, s.limits.MaxListResults).WithRule("artifacts.limit")
	}
	return n, nil
}
