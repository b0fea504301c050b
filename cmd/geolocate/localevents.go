package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
)

// localEvents is what `geolocate local` does with the results pipe: the
// pipe the run plays over the table's stream, and --events' file.
type localEvents struct {
	pipe *pipes.Pipe
	file *os.File
	buf  *bufio.Writer

	mu     sync.Mutex
	err    error
	closed bool
}

// newLocalEvents reads the results pipe before anything starts: from the
// synthesized template when --template was given, else the default
// configuration's (pkg/local/pipes keeps a copy equal to the synthesized
// one). A template without a pipe (events=false) plays none; --events then
// is an error, as it is with --serve, whose results pipe publishes onto
// the served results bus instead (receive them with a rule, as on AWS).
func newLocalEvents(path, templatePath string, templateGiven, run bool) (*localEvents, error) {
	l := &localEvents{}
	if !run {
		if path != "" {
			return nil, usageError{errors.New("--events writes one run's events to a file: --serve publishes them on its results bus (ResultEventsBusName), read them there with a rule and a queue as on AWS")}
		}
		return l, nil
	}
	var template []byte
	if templateGiven {
		raw, err := os.ReadFile(templatePath)
		if err != nil {
			return nil, fmt.Errorf("--template: %w (run `make synth` first)", err)
		}
		template = raw
	}
	pipe, err := pipes.ResultsPipe(template)
	if err != nil {
		if template != nil && path == "" {
			return l, nil // the stack publishes no events: nothing to play
		}
		return nil, fmt.Errorf("result events: %w", err)
	}
	l.pipe = pipe
	if path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("--events: %w", err)
		}
		l.file, l.buf = f, bufio.NewWriter(f)
	}
	return l, nil
}

// write appends one event to the file, as a JSON line.
func (l *localEvents) write(e *pipes.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf == nil || l.closed || l.err != nil {
		return
	}
	line, err := json.Marshal(e)
	if err == nil {
		line = append(line, '\n')
		_, err = l.buf.Write(line)
	}
	l.err = err
}

// close flushes and closes the file; later calls return nil.
func (l *localEvents) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil || l.closed {
		return nil
	}
	l.closed = true
	err := errors.Join(l.err, l.buf.Flush(), l.file.Close())
	if err != nil {
		return fmt.Errorf("--events %s: %w", l.file.Name(), err)
	}
	return nil
}

// writeEventsLine sums up the result events of the run.
func writeEventsLine(w io.Writer, sum *pipeline.Summary) {
	if sum.Events == nil {
		return
	}
	types := make([]string, 0, len(sum.Events))
	for t := range sum.Events {
		types = append(types, t)
	}
	sort.Strings(types)
	parts := make([]string, 0, len(types))
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%d %s", sum.Events[t], t))
	}
	fmt.Fprintf(w, "result events: %s", dash(strings.Join(parts, ", ")))
	if n := len(sum.EventErrors); n > 0 {
		fmt.Fprintf(w, "; %d NOT DELIVERED (the pipe could not render them)", n)
	}
	fmt.Fprintln(w)
}
