package keyheader

import "testing"

func TestCheck(t *testing.T) {
	for _, ok := range []string{Default, "X-GeoInfer-Key", "x-api-key", "Api_Key", "k"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want nil", ok, err)
		}
	}
	long := make([]byte, maxLength+1)
	for i := range long {
		long[i] = 'a'
	}
	for _, bad := range []string{"", "X Service Key", "X-Key:", "X-Key\r\nEvil: 1", "Schlüssel", "Authorization", "content-type", string(long)} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%q) = nil, want an error", bad)
		}
	}
}
