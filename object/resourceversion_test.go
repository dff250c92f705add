package object

import "testing"

func TestCompareResourceVersion(t *testing.T) {
	tests := []struct {
		a, b string
		want int
		err  bool
	}{
		{"5", "5", 0, false},
		{"5", "12", -1, false}, // longer is larger, though "5" > "12" as strings
		{"12", "5", 1, false},
		{"123", "124", -1, false},
		{"999", "1000", -1, false},
		{"0", "1", -1, false},
		{"", "1", 0, true},
		{"01", "1", 0, true},
		{"1a", "1", 0, true},
		{"1", "-1", 0, true},
	}
	for _, tt := range tests {
		got, err := CompareResourceVersion(tt.a, tt.b)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("CompareResourceVersion(%q, %q) = %d, %v; want %d, error %v", tt.a, tt.b, got, err, tt.want, tt.err)
		}
	}
}
