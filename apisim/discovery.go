package apisim

import (
	"net/http"
	"slices"
	"strings"
)

// serveDiscovery answers /api, /apis, /api/v1, /apis/G/V and /version. It reports whether
// the path was a discovery path.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	path := strings.TrimSuffix(r.URL.Path, "/")
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case path == "/version":
		writeJSON(w, http.StatusOK, map[string]string{"major": "1", "minor": "36", "gitVersion": "v1.36.0-kinformer-sim"})
	case path == "/api":
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case path == "/apis":
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": s.groups()})
	case path == "/api/v1":
		writeJSON(w, http.StatusOK, s.resourceList("", "v1"))
	case strings.HasPrefix(path, "/apis/") && strings.Count(path, "/") == 3:
		gv := strings.TrimPrefix(path, "/apis/")
		group, version, _ := strings.Cut(gv, "/")
		list := s.resourceList(group, version)
		if len(list["resources"].([]map[string]any)) == 0 {
			return false
		}
		writeJSON(w, http.StatusOK, list)
	default:
		return false
	}
	return true
}

func (s *Server) groups() []map[string]any {
	versions := map[string][]string{}
	for _, t := range s.types {
		if t.Group != "" && !slices.Contains(versions[t.Group], t.Version) {
			versions[t.Group] = append(versions[t.Group], t.Version)
		}
	}
	names := make([]string, 0, len(versions))
	for g := range versions {
		names = append(names, g)
	}
	slices.Sort(names)
	out := []map[string]any{}
	for _, g := range names {
		var vs []map[string]string
		for _, v := range versions[g] {
			vs = append(vs, map[string]string{"groupVersion": g + "/" + v, "version": v})
		}
		out = append(out, map[string]any{"name": g, "versions": vs, "preferredVersion": vs[0]})
	}
	return out
}

func (s *Server) resourceList(group, version string) map[string]any {
	var resources []map[string]any
	for _, t := range s.types {
		if t.Group != group || t.Version != version {
			continue
		}
		verbs := []string{"create", "delete", "get", "list", "patch", "update", "watch"}
		resources = append(resources, map[string]any{"name": t.Resource, "singularName": t.singular(),
			"namespaced": t.Namespaced, "kind": t.Kind, "verbs": verbs, "shortNames": t.ShortNames})
		if t.Status {
			resources = append(resources, map[string]any{"name": t.Resource + "/status", "singularName": "",
				"namespaced": t.Namespaced, "kind": t.Kind, "verbs": []string{"get", "patch", "update"}})
		}
	}
	slices.SortFunc(resources, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	if resources == nil {
		resources = []map[string]any{}
	}
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
}
