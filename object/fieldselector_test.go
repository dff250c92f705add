package object

import "testing"

func TestCheckFieldSelector(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"", true},
		{"spec.nodeName=node-1", true},
		{"metadata.name==web,status.phase!=Running", true},
		{"spec.nodeName=", true},         // an empty value is a value
		{`metadata.name=a\,b`, true},     // an escaped comma is in the value
		{"spec.nodeName", false},         // no operator
		{"=web", false},                  // no field
		{"status.phase=Running,,", true}, // empty terms are skipped, as by the apiserver
		{",a=b,,c=d", true},
		{"metadata.name in (a,b)", false}, // label selector syntax
		{`metadata.name\=web`, false},     // the escaped = is no operator
		{"metadata.namespace!=kube-system", true},
	} {
		if err := CheckFieldSelector(tc.in); (err == nil) != tc.ok {
			t.Errorf("CheckFieldSelector(%q) = %v, want ok %v", tc.in, err, tc.ok)
		}
	}
}
