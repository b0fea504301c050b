package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RuntimeAPI is a minimal Lambda Runtime API (the 2018-06-01 interface a
// custom runtime such as aws-lambda-go polls) on 127.0.0.1, serving exactly
// one invocation. It records when the function first asked for an event
// (the end of its init: "ready to take the first event") and its answer.
// Later polls wait, as they would in a frozen Lambda environment, until
// Close.
type RuntimeAPI struct {
	event     []byte
	requestID string
	deadline  time.Duration

	srv  *http.Server
	addr string
	done chan struct{}

	mu        sync.Mutex
	polls     int
	firstPoll chan time.Time
	result    chan Invocation
	closeOnce sync.Once
}

// Invocation is the function's answer to the event.
type Invocation struct {
	At    time.Time // when the answer arrived
	Body  []byte    // the response payload, or the error document
	Error bool      // the function reported an error (invocation or init)
}

// RuntimeAPIPath is the prefix of every Runtime API route.
const RuntimeAPIPath = "/2018-06-01/runtime/"

// StartRuntimeAPI serves event to the first poll of a function whose
// AWS_LAMBDA_RUNTIME_API is Addr(). deadline is the invocation's timeout.
func StartRuntimeAPI(event []byte, deadline time.Duration) (*RuntimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("runtime API: listen: %w", err)
	}
	r := &RuntimeAPI{
		event:     event,
		requestID: fmt.Sprintf("bench-%d", time.Now().UnixNano()),
		deadline:  deadline,
		addr:      ln.Addr().String(),
		done:      make(chan struct{}),
		firstPoll: make(chan time.Time, 1),
		result:    make(chan Invocation, 1),
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Addr is the host:port to put in AWS_LAMBDA_RUNTIME_API.
func (r *RuntimeAPI) Addr() string { return r.addr }

// FirstPoll delivers the time of the first GET .../invocation/next.
func (r *RuntimeAPI) FirstPoll() <-chan time.Time { return r.firstPoll }

// Result delivers the function's answer to the event (or its init error).
func (r *RuntimeAPI) Result() <-chan Invocation { return r.result }

// Close releases waiting polls and stops the server.
func (r *RuntimeAPI) Close() error {
	r.closeOnce.Do(func() { close(r.done) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return r.srv.Close()
}

func (r *RuntimeAPI) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	path := strings.TrimPrefix(req.URL.Path, RuntimeAPIPath)
	switch {
	case req.Method == http.MethodGet && path == "invocation/next":
		r.next(w, req, now)
	case req.Method == http.MethodPost && path == "invocation/"+r.requestID+"/response":
		r.answer(w, req, now, false)
	case req.Method == http.MethodPost && (path == "invocation/"+r.requestID+"/error" || path == "init/error"):
		r.answer(w, req, now, true)
	default:
		http.NotFound(w, req)
	}
}

func (r *RuntimeAPI) next(w http.ResponseWriter, req *http.Request, now time.Time) {
	r.mu.Lock()
	r.polls++
	first := r.polls == 1
	r.mu.Unlock()
	if !first {
		// A real environment is frozen here until the next event.
		select {
		case <-r.done:
		case <-req.Context().Done():
		}
		http.Error(w, "runtime API closed", http.StatusGone)
		return
	}
	r.firstPoll <- now
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", r.requestID)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(now.Add(r.deadline).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:bench")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(r.event)
}

func (r *RuntimeAPI) answer(w http.ResponseWriter, req *http.Request, now time.Time, isError bool) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 6<<20))
	select {
	case r.result <- Invocation{At: now, Body: body, Error: isError}:
	default: // only the first answer is kept
	}
	w.WriteHeader(http.StatusAccepted)
}
