package listwatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Post sends body, a JSON object, to path (absolute, from the server's root) and returns
// the answer's body. It is for the create-only APIs that are no resource to list or
// watch and answer with the object posted, its status filled in: TokenReview
// (/apis/authentication.k8s.io/v1/tokenreviews) and SubjectAccessReview
// (/apis/authorization.k8s.io/v1/subjectaccessreviews). The request is rate-limited,
// authenticated and retried like every other; API errors are *object.StatusError.
func (c *Client) Post(ctx context.Context, path string, body []byte) ([]byte, error) {
	// A relative path would be joined to the base URL's path without a separator.
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("POST %q: the path must start with /", path)
	}
	return c.do(ctx, request{method: http.MethodPost, path: path, body: body, contentType: "application/json"})
}
