package manager

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// How long answers are kept, and the bounds on the reviews: kube-controller-manager's
// defaults (--authentication-token-webhook-cache-ttl, --authorization-webhook-cache-
// authorized-ttl and -unauthorized-ttl, its webhooks' 10 s timeout). Short, so that a
// revoked token or binding stops working within seconds; long enough that a scraper
// costs two reviews every 10 s, not two per scrape.
const (
	authnTTL        = 10 * time.Second
	authzAllowedTTL = 10 * time.Second
	authzDeniedTTL  = 10 * time.Second
	reviewTimeout   = 10 * time.Second
	reviewCacheSize = 1024
)

const (
	tokenReviewPath         = "/apis/authentication.k8s.io/v1/tokenreviews"
	subjectAccessReviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	// mastersGroup is allowed everything without a SubjectAccessReview, as
	// kube-controller-manager's --authorization-always-allow-groups default: the
	// apiserver would allow it anyway, and an admin's request costs one call less.
	mastersGroup = "system:masters"
)

// reviewer asks the apiserver who a caller is (a TokenReview) and whether it may do what
// it asks (a SubjectAccessReview), as kube-controller-manager's delegated authentication
// and authorization do, and keeps the answers briefly. Failed calls are not kept: the
// next request tries again.
type reviewer struct {
	client *listwatch.Client
	authn  *reviewCache[authnAnswer]
	authz  *reviewCache[authzAnswer]
}

func newReviewer(c *listwatch.Client, clk clock.Clock) *reviewer {
	return &reviewer{client: c, authn: newReviewCache[authnAnswer](clk, reviewCacheSize),
		authz: newReviewCache[authzAnswer](clk, reviewCacheSize)}
}

// user is authentication.k8s.io/v1 UserInfo: what a SubjectAccessReview asks about.
type user struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

type authnAnswer struct {
	authenticated bool
	user          user
}

type authzAnswer struct {
	allowed bool
	reason  string
}

// review is what is posted: a TokenReview or a SubjectAccessReview with its spec.
type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       any    `json:"spec"`
}

type subjectAccessReviewSpec struct {
	NonResourceAttributes nonResourceAttributes `json:"nonResourceAttributes"`
	User                  string                `json:"user"`
	UID                   string                `json:"uid,omitempty"`
	Groups                []string              `json:"groups,omitempty"`
	Extra                 map[string][]string   `json:"extra,omitempty"`
}

type nonResourceAttributes struct {
	Path string `json:"path"`
	Verb string `json:"verb"`
}

// authenticate says who token belongs to. The answer is kept under the token's hash, so
// the cache holds no credential.
func (r *reviewer) authenticate(ctx context.Context, token string) (authnAnswer, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	if a, ok := r.authn.get(key); ok {
		return a, nil
	}
	var answer struct {
		Status struct {
			Authenticated bool   `json:"authenticated"`
			User          user   `json:"user"`
			Error         string `json:"error"`
		} `json:"status"`
	}
	spec := struct {
		Token string `json:"token"`
	}{token}
	if err := r.post(ctx, tokenReviewPath, review{"authentication.k8s.io/v1", "TokenReview", spec}, &answer); err != nil {
		return authnAnswer{}, scrub(err, token)
	}
	// An answer that names no user authenticates no one: there would be nobody to authorize.
	a := authnAnswer{authenticated: answer.Status.Authenticated && answer.Status.User.Username != "", user: answer.Status.User}
	r.authn.put(key, a, authnTTL)
	return a, nil
}

// authorize says whether u may do verb on the non-resource URL path.
func (r *reviewer) authorize(ctx context.Context, u user, verb, path string) (authzAnswer, error) {
	if slices.Contains(u.Groups, mastersGroup) {
		return authzAnswer{allowed: true}, nil
	}
	spec := subjectAccessReviewSpec{NonResourceAttributes: nonResourceAttributes{Path: path, Verb: verb},
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	// The spec is all the answer depends on (encoding/json sorts Extra's keys).
	keyJSON, err := json.Marshal(spec)
	if err != nil {
		return authzAnswer{}, err
	}
	key := string(keyJSON)
	if a, ok := r.authz.get(key); ok {
		return a, nil
	}
	var answer struct {
		Status struct {
			Allowed         bool   `json:"allowed"`
			Reason          string `json:"reason"`
			EvaluationError string `json:"evaluationError"`
		} `json:"status"`
	}
	if err := r.post(ctx, subjectAccessReviewPath, review{"authorization.k8s.io/v1", "SubjectAccessReview", spec}, &answer); err != nil {
		return authzAnswer{}, err
	}
	a := authzAnswer{allowed: answer.Status.Allowed, reason: answer.Status.Reason}
	ttl := authzDeniedTTL
	if a.allowed {
		ttl = authzAllowedTTL
	}
	r.authz.put(key, a, ttl)
	return a, nil
}

func (r *reviewer) post(ctx context.Context, path string, rv review, into any) error {
	body, err := json.Marshal(rv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	b, err := r.client.Post(ctx, path, body)
	if err != nil {
		if object.IsForbidden(err) {
			return fmt.Errorf("%s: %w (the manager's user needs the ClusterRole system:auth-delegator)", rv.Kind, err)
		}
		return fmt.Errorf("%s: %w", rv.Kind, err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: decoding the answer: %w", rv.Kind, err)
	}
	return nil
}

// scrub keeps a caller's token out of an error that is about to be logged: an answer
// that echoes the request would carry it.
func scrub(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
}
