package pipeline

import (
	"fmt"
	"io"
	"sync"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// emfStore feeds the functions' output into a metric store, as CloudWatch
// Logs extracts metrics from a function's log stream. A malformed record is
// reported once on progress, since a metric the dashboard and alarms expect
// would silently be missing otherwise.
func emfStore(store *alarmeval.Store, progress io.Writer) io.Writer {
	var once sync.Once
	return &alarmeval.EMFWriter{Store: store, OnError: func(err error) {
		once.Do(func() { fmt.Fprintf(progress, "metrics   an EMF record was not stored: %v\n", err) })
	}}
}
