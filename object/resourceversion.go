package object

import "fmt"

// CompareResourceVersion orders two resourceVersions, as Kubernetes allows since 1.35
// (KEP-5504): both are decimal integers without leading zeros, so the longer one is the
// larger and two of one length compare as strings. It returns -1, 0 or +1, or an error
// when either is not such a number (an apiserver older than 1.35 promised nothing).
func CompareResourceVersion(a, b string) (int, error) {
	for _, rv := range [2]string{a, b} {
		if !wellFormedRV(rv) {
			return 0, fmt.Errorf("resourceVersion %q is not comparable: not a decimal integer", rv)
		}
	}
	switch {
	case len(a) != len(b):
		if len(a) < len(b) {
			return -1, nil
		}
		return 1, nil
	case a < b:
		return -1, nil
	case a > b:
		return 1, nil
	}
	return 0, nil
}

func wellFormedRV(rv string) bool {
	if rv == "" || (rv[0] == '0' && len(rv) > 1) {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}
