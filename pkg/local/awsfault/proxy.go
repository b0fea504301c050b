package awsfault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards requests to one backend and injects the faults of its
// current rules. It listens on 127.0.0.1 only.
type Proxy struct {
	service Service
	backend *url.URL
	client  *http.Client
	srv     *http.Server
	ln      net.Listener
	ids     atomic.Int64

	mu       sync.Mutex
	rules    []Rule
	fired    []int // injections per rule, for Rule.Limit
	rng      *rand.Rand
	requests map[string]int // by operation
	injected map[string]int // by "Operation Fault"
}

// Start runs a proxy for service in front of backend (a base URL such as
// http://127.0.0.1:8000). seed makes the choice of faulted requests
// repeatable for a given order of requests.
func Start(service Service, backend string, seed uint64) (*Proxy, error) {
	u, err := url.Parse(backend)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("awsfault: backend %q is not a base URL", backend)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("awsfault: listen: %w", err)
	}
	p := &Proxy{
		service: service,
		backend: u,
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		}},
		ln:       ln,
		rng:      rand.New(rand.NewPCG(seed, uint64(service))),
		requests: map[string]int{},
		injected: map[string]int{},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's base URL, for AWS_ENDPOINT_URL_<SERVICE>.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// SetRules replaces the rules; no rules means a transparent proxy. The
// first rule that matches a request and fires (by its rate) applies.
func (p *Proxy) SetRules(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = slices.Clone(rules)
	p.fired = make([]int, len(rules))
}

// Close stops the proxy, cutting open connections.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	return err
}

// Stats are the requests a proxy saw and the faults it injected.
type Stats struct {
	Requests map[string]int // by operation
	Injected map[string]int // by "Operation: fault name"
}

// Stats returns a copy of the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Requests: maps.Clone(p.requests), Injected: maps.Clone(p.injected)}
}

// pick counts the request and returns the fault to inject, if any.
func (p *Proxy) pick(op string) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests[op]++
	for i, r := range p.rules {
		if r.Limit > 0 && p.fired[i] >= r.Limit {
			continue
		}
		if r.matches(op) && r.Rate > 0 && p.rng.Float64() < r.Rate {
			p.fired[i]++
			p.injected[op+": "+r.Fault.Name()]++
			return r.Fault, true
		}
	}
	return Fault{}, false
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	op := p.service.operation(req)
	fault, faulted := p.pick(op)
	requestID := "awsfault-" + strconv.FormatInt(p.ids.Add(1), 10)
	if faulted {
		switch fault.Kind {
		case Error:
			_, _ = io.Copy(io.Discard, req.Body)
			p.service.writeError(w, req, fault, requestID)
			return
		case ResetBefore:
			abort()
		case Delay:
			t := time.NewTimer(fault.Delay)
			select {
			case <-req.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}

	status, header, body, err := p.forward(req)
	if err != nil {
		// The backend itself failed: the client sees a 502, as from a
		// load balancer, which the SDK retries.
		http.Error(w, "awsfault: backend: "+err.Error(), http.StatusBadGateway)
		return
	}
	if faulted && (fault.Kind == AnswerLost || fault.Kind == ResetMidBody && len(body) < 2) {
		abort()
	}
	h := w.Header()
	for k, vs := range header {
		if hopHeader[http.CanonicalHeaderKey(k)] {
			continue
		}
		h[k] = vs
	}
	if req.Method == http.MethodHead {
		// HEAD answers carry the object's length, and no body.
		if n := header.Get("Content-Length"); n != "" {
			h.Set("Content-Length", n)
		}
	} else {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	if faulted && fault.Kind == ResetMidBody {
		_, _ = w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		abort()
	}
	_, _ = w.Write(body)
}

// abort closes the client's connection without an answer (or with the
// part already written); net/http does not log it.
func abort() { panic(http.ErrAbortHandler) }

// hopHeader lists the headers that belong to one connection, not the
// message (RFC 9110, section 7.6.1).
var hopHeader = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true,
	"Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Content-Length": true,
}

// forward sends req to the backend and reads the whole answer.
func (p *Proxy) forward(req *http.Request) (int, http.Header, []byte, error) {
	reqBody, err := io.ReadAll(req.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read request: %w", err)
	}
	// The backend's work is not cut short when the client goes away: a
	// write that reached AWS is applied whatever the client does next.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), time.Minute)
	defer cancel()
	target := *p.backend
	target.Path = req.URL.Path
	target.RawPath = req.URL.RawPath
	target.RawQuery = req.URL.RawQuery
	out, err := http.NewRequestWithContext(ctx, req.Method, target.String(), bytes.NewReader(reqBody))
	if err != nil {
		return 0, nil, nil, err
	}
	for k, vs := range req.Header {
		if !hopHeader[http.CanonicalHeaderKey(k)] {
			out.Header[k] = vs
		}
	}
	out.Host = req.Host // the host the client signed
	out.ContentLength = int64(len(reqBody))
	resp, err := p.client.Do(out)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, errors.Join(errors.New("read response"), err)
	}
	return resp.StatusCode, resp.Header, body, nil
}
