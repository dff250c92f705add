package listwatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/kinformer/kinformer/object"
)

// GroupVersionResource names a resource at one API version ("" group is core).
type GroupVersionResource struct {
	Group, Version, Resource string
}

// String writes the resource the way kubectl accepts it: "deployments.v1.apps", "pods.v1".
func (g GroupVersionResource) String() string {
	if g.Group == "" {
		return g.Resource + "." + g.Version
	}
	return g.Resource + "." + g.Version + "." + g.Group
}

// GroupVersion is the apiVersion of the resource's objects: "v1", "apps/v1".
func (g GroupVersionResource) GroupVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// ResourceInfo is what discovery says about a resource.
type ResourceInfo struct {
	GroupVersionResource
	Kind         string
	Namespaced   bool
	SingularName string
	ShortNames   []string
	Verbs        []string
}

// Path builds the URL path of the resource, of one object when name is set, and of its
// subresource ("status", "scale") when sub is set. namespace is ignored for
// cluster-scoped resources, and "" on a namespaced one means all namespaces.
func (r ResourceInfo) Path(namespace, name, sub string) string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/" + r.Version)
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	if r.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + namespace)
	}
	b.WriteString("/" + r.Resource)
	if name != "" {
		b.WriteString("/" + name)
		if sub != "" {
			b.WriteString("/" + sub)
		}
	}
	return b.String()
}

type apiGroup struct {
	Name     string `json:"name"`
	Versions []struct {
		Version string `json:"version"`
	} `json:"versions"`
	PreferredVersion struct {
		Version string `json:"version"`
	} `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames"`
}

// discoveryCache remembers the group list and the resource lists fetched so far. A name
// that is not found refreshes it once (a CRD may have been created since).
type discoveryCache struct {
	mu        sync.Mutex
	groups    []apiGroup // core first, as group ""
	resources map[string][]ResourceInfo
}

// ErrUnknownResource is wrapped by Discover's error for a name the server does not serve.
var ErrUnknownResource = fmt.Errorf("the server does not have this resource type")

// Discover resolves a resource name as kubectl does: "pods", "po", "pod", "Pod",
// "deployments.apps", "deployments.v1.apps", or a CRD's plural.group.
func (c *Client) Discover(ctx context.Context, name string) (ResourceInfo, error) {
	c.disco.mu.Lock()
	defer c.disco.mu.Unlock()
	for fresh := false; ; fresh = true {
		if fresh || c.disco.groups == nil {
			if err := c.fetchGroups(ctx); err != nil {
				return ResourceInfo{}, err
			}
		}
		info, found, err := c.resolve(ctx, name)
		if err != nil || found {
			return info, err
		}
		if fresh {
			return ResourceInfo{}, fmt.Errorf("%q: %w", name, ErrUnknownResource)
		}
	}
}

func (c *Client) fetchGroups(ctx context.Context) error {
	var core struct {
		Versions []string `json:"versions"`
	}
	if err := c.getJSON(ctx, "/api", &core); err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	groups := []apiGroup{{Name: ""}}
	for _, v := range core.Versions {
		groups[0].Versions = append(groups[0].Versions, struct {
			Version string `json:"version"`
		}{v})
	}
	if len(core.Versions) > 0 {
		groups[0].PreferredVersion.Version = core.Versions[0]
	}
	var list struct {
		Groups []apiGroup `json:"groups"`
	}
	if err := c.getJSON(ctx, "/apis", &list); err != nil && !object.IsNotFound(err) {
		return fmt.Errorf("discovery: %w", err)
	}
	c.disco.groups = append(groups, list.Groups...)
	c.disco.resources = map[string][]ResourceInfo{}
	return nil
}

func (c *Client) resolve(ctx context.Context, name string) (ResourceInfo, bool, error) {
	res, rest, dotted := strings.Cut(name, ".")
	for _, g := range c.disco.groups {
		version := g.PreferredVersion.Version
		if dotted {
			switch {
			case rest == g.Name:
			case g.Name != "" && strings.HasSuffix(rest, "."+g.Name) && hasVersion(g, strings.TrimSuffix(rest, "."+g.Name)):
				version = strings.TrimSuffix(rest, "."+g.Name)
			case g.Name == "" && hasVersion(g, rest):
				version = rest
			default:
				continue
			}
		}
		list, err := c.resourceList(ctx, g.Name, version)
		if err != nil {
			return ResourceInfo{}, false, err
		}
		for _, r := range list {
			if r.matches(res) {
				return r, true, nil
			}
		}
	}
	return ResourceInfo{}, false, nil
}

func hasVersion(g apiGroup, v string) bool {
	for _, gv := range g.Versions {
		if gv.Version == v {
			return true
		}
	}
	return false
}

func (r ResourceInfo) matches(name string) bool {
	if strings.EqualFold(r.Resource, name) || strings.EqualFold(r.SingularName, name) || strings.EqualFold(r.Kind, name) {
		return true
	}
	for _, s := range r.ShortNames {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

func (c *Client) resourceList(ctx context.Context, group, version string) ([]ResourceInfo, error) {
	gv := GroupVersionResource{Group: group, Version: version}.GroupVersion()
	if list, ok := c.disco.resources[gv]; ok {
		return list, nil
	}
	path := "/apis/" + gv
	if group == "" {
		path = "/api/" + gv
	}
	var body struct {
		Resources []apiResource `json:"resources"`
	}
	if err := c.getJSON(ctx, path, &body); err != nil {
		// An aggregated API that is down must not hide every other resource.
		if se, ok := object.AsStatus(err); ok && (se.Status.Code == http.StatusServiceUnavailable || se.Status.Code == http.StatusNotFound) {
			c.disco.resources[gv] = nil
			return nil, nil
		}
		return nil, fmt.Errorf("discovery of %s: %w", gv, err)
	}
	var list []ResourceInfo
	for _, r := range body.Resources {
		if strings.Contains(r.Name, "/") { // subresources
			continue
		}
		list = append(list, ResourceInfo{
			GroupVersionResource: GroupVersionResource{Group: group, Version: version, Resource: r.Name},
			Kind:                 r.Kind, Namespaced: r.Namespaced, SingularName: r.SingularName,
			ShortNames: r.ShortNames, Verbs: r.Verbs,
		})
	}
	c.disco.resources[gv] = list
	return list, nil
}

func (c *Client) getJSON(ctx context.Context, path string, into any) error {
	b, err := c.do(ctx, request{method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("GET %s: decoding response: %w", path, err)
	}
	return nil
}
