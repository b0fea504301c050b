package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRuntimeAPIServesOneInvocation plays the runtime client's part with
// plain HTTP: first poll gets the event and headers, the answer is
// recorded, and a second poll waits until Close.
func TestRuntimeAPIServesOneInvocation(t *testing.T) {
	event := []byte(`{"Records":[]}`)
	api, err := StartRuntimeAPI(event, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	base := "http://" + api.Addr() + RuntimeAPIPath

	start := time.Now()
	resp, err := http.Get(base + "invocation/next")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != string(event) {
		t.Errorf("event = %q, want %q", body, event)
	}
	id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
	if id == "" || resp.Header.Get("Lambda-Runtime-Deadline-Ms") == "" {
		t.Fatalf("missing runtime headers: %v", resp.Header)
	}
	select {
	case at := <-api.FirstPoll():
		if at.Before(start) {
			t.Errorf("first poll at %v, before the request was sent (%v)", at, start)
		}
	default:
		t.Fatal("first poll not recorded")
	}

	resp, err = http.Post(base+"invocation/"+id+"/response", "application/json", strings.NewReader(`{"ok":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("response status %d, want 202", resp.StatusCode)
	}
	got := <-api.Result()
	if got.Error || string(got.Body) != `{"ok":true}` {
		t.Errorf("result = %+v", got)
	}

	// The second poll must block until Close.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	polled := make(chan time.Time, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"invocation/next", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		polled <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond)
	closedAt := time.Now()
	api.Close()
	if at := <-polled; at.Before(closedAt) {
		t.Errorf("second poll returned before Close")
	}
}

func TestRuntimeAPIRecordsInitErrors(t *testing.T) {
	api, err := StartRuntimeAPI([]byte(`{}`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	resp, err := http.Post("http://"+api.Addr()+RuntimeAPIPath+"init/error", "application/json", strings.NewReader(`{"errorMessage":"boom"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-api.Result(); !got.Error || !strings.Contains(string(got.Body), "boom") {
		t.Errorf("result = %+v, want the init error", got)
	}
}
