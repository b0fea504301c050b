package pipeline

import (
	"context"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geomap/widget"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// MapWidget answers the dashboard's custom widget as its function
// (functions/mapwidget) does on AWS: the same handler, invoked through the
// Lambda runtime's adapter, reading records instead of the table. The
// stack has one custom widget, the map; the endpoint is not needed. It is
// what dashpage.Options.CustomWidget takes.
func MapWidget(records []ledger.Record) func(endpoint string, event []byte) ([]byte, error) {
	w := widget.New(RecordSet(records))
	return func(_ string, event []byte) ([]byte, error) {
		return lambdarun.Invoke(context.Background(), w.Handle, event, mapWidgetTimeout)
	}
}

// mapWidgetTimeout is the deployed function's timeout (infra/mapwidget.go).
const mapWidgetTimeout = 30 * time.Second
