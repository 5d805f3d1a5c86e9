package artifacts

import (
	"context"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/artifactkey"
)

// previewStore shows the human who approves a store_artifact call the key
// the server will write, the size and type, and whether it may replace an
// existing artifact; text content is shown in full.
func (s *Store) previewStore(_ context.Context, in StoreIn) (string, error) {
	id, err := artifactkey.TaskID(in.TaskID)
	if err != nil {
		return "", err
	}
	if err := artifactkey.CheckName(in.Name); err != nil {
		return "", err
	}
	ct, err := contentType(in.ContentType, in.Encoding)
	if err != nil {
		return "", err
	}
	size, _, err := decodeContent(in.Content, in.Encoding)
	if err != nil {
		return "", err
	}
	if size > s.limits.MaxStoreBytes {
		return "", s.tooLarge(size)
	}
	verb, mode := "Store", "fails if it already exists"
	if in.Overwrite {
		verb, mode = "Store or REPLACE", "replaces an existing artifact of that name"
	}
	msg := fmt.Sprintf("%s artifact %s in bucket %s (%d bytes, %s; %s)", verb, artifactkey.Key(id, in.Name), s.bucket, size, ct, mode)
	if in.Encoding == "text" {
		msg += "\n\nContent:\n" + in.Content
	}
	return msg, nil
}
