package artifacts

import (
	"context"
	"errors"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

const (
	unavailableHint = "The artifact store is not reachable right now; try the same call again later, or tell the user it is down."
	operatorHint    = "This is a configuration problem on the server side; tell the operator. Retrying will not help."
)

// storeError turns an error from the store into one the model can act on.
// It names the artifact, never the endpoint, bucket or credentials; those
// go to the log.
func (s *Store) storeError(err error, op, taskID, name string) error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	if errors.Is(err, context.Canceled) {
		return toolerr.Wrap(err, toolerr.Canceled, "", "%s was cancelled", op)
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "NoSuchKey":
		return toolerr.Wrap(err, toolerr.NotFound, "Call list_artifacts with the task_id to see the stored names.",
			"task %s has no artifact named %q", taskID, name).WithRule("artifacts.exists")
	case "PreconditionFailed":
		return toolerr.Wrap(err, toolerr.AlreadyExists, "Choose another name, or pass overwrite: true to replace it.",
			"task %s already has an artifact named %q", taskID, name).WithRule("artifacts.no_overwrite")
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken":
		s.log.Warn("artifact store refused the credentials", "op", op, "code", resp.Code, "message", resp.Message)
		return toolerr.Wrap(err, toolerr.BackendDenied, operatorHint,
			"the artifact store refused toolwarden's credentials (%s)", resp.Code).WithRule("artifacts.backend")
	case "NoSuchBucket":
		s.log.Warn("artifact bucket missing", "op", op, "bucket", s.bucket)
		return toolerr.Wrap(err, toolerr.BackendUnavailable, operatorHint,
			"the artifact store has no bucket for toolwarden").WithRule("artifacts.backend")
	}
	if resp.Code == "" || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode >= 500 {
		s.log.Warn("artifact store unavailable", "op", op, "error", err)
		return toolerr.Wrap(err, toolerr.BackendUnavailable, unavailableHint,
			"the artifact store did not answer %s", op).WithRule("artifacts.backend")
	}
	s.log.Error("artifact store error", "op", op, "code", resp.Code, "status", resp.StatusCode, "message", resp.Message)
	return toolerr.Wrap(err, toolerr.Internal, operatorHint, "the artifact store failed %s (%s)", op, resp.Code)
}
