package geosim

import (
	"bytes"
	"testing"
)

// KeepFiles lets a test read what the service received; off, no call holds
// the bytes.
func TestKeepFilesKeepsTheReceivedBytes(t *testing.T) {
	img := testJPEG(t, 7)
	for _, keep := range []bool{false, true} {
		sim, base := newTestServer(t, func(c *Config) { c.KeepFiles = keep })
		if resp := predict(t, base, testKey, nil, img); resp.status != 200 {
			t.Fatalf("status %d: %s", resp.status, resp.body)
		}
		got := sim.Calls()[0].File
		if keep && !bytes.Equal(got, img) {
			t.Errorf("KeepFiles: kept %d bytes, want the %d uploaded", len(got), len(img))
		}
		if !keep && got != nil {
			t.Errorf("without KeepFiles the call holds %d bytes", len(got))
		}
	}
}
