package object

import "testing"

func TestIntOrStringScaled(t *testing.T) {
	tests := []struct {
		v       IntOrString
		total   int
		up      bool
		want    int
		wantErr bool
	}{
		{FromString("25%"), 10, true, 3, false},
		{FromString("25%"), 10, false, 2, false},
		{FromInt(4), 10, false, 4, false},
		{FromString("0%"), 10, true, 0, false},
		{FromString("3"), 10, true, 0, true},
		{FromString("x%"), 10, true, 0, true},
	}
	for _, tt := range tests {
		got, err := tt.v.Scaled(tt.total, tt.up)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%v.Scaled(%d,%v) = %d, %v; want %d (error %v)", tt.v, tt.total, tt.up, got, err, tt.want, tt.wantErr)
		}
	}
}
