package geosim

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestStartBindsLoopbackOnly(t *testing.T) {
	sim := New()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.invalid:0", "no-port"} {
		if _, stop, err := sim.Start(addr); err == nil {
			stop()
			t.Errorf("Start(%q) succeeded, want a refusal", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", ":0"} {
		url, stop, err := sim.Start(addr)
		if err != nil {
			t.Fatalf("Start(%q): %v", addr, err)
		}
		if resp := get(t, url, PathModels, ""); resp.status != http.StatusOK {
			t.Errorf("%s: status %d", addr, resp.status)
		}
		stop()
		if _, err := http.Get(url + PathModels); err == nil {
			t.Errorf("%s still answers after stop", addr)
		}
	}
}

func TestListenAndServeStopsWithContext(t *testing.T) {
	sim := New()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- sim.ListenAndServe(ctx, "127.0.0.1:0", func(u string) { urls <- u }) }()
	url := <-urls
	if resp := get(t, url, PathModels, ""); resp.status != http.StatusOK {
		t.Errorf("status %d", resp.status)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
}
