// Command mapwidget is the Lambda behind the dashboard's map: a CloudWatch
// custom widget that draws the records of the dashboard's time range on a
// world map (see pkg/geomap/widget). It reads the results table through
// its by-status index and nothing else. Locally,
// `go run ./functions/mapwidget -event events/custom-widget.json` draws once
// (with TABLE_NAME and AWS credentials, or the exports of `geolocate local --serve`).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/geomap/widget"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func main() {
	lambdarun.Main("mapwidget", usage, func(ctx context.Context) (any, error) {
		w, err := build(ctx, os.Getenv, os.Stderr)
		if err != nil {
			return nil, err
		}
		return w.Handle, nil
	})
}

// usage precedes the flags in -h's output.
const usage = `usage: mapwidget [-event FILE|-] [-timeout D]

The dashboard map's Lambda function (a CloudWatch custom widget). Under
Lambda it serves the runtime; outside, -event draws once on an event file
(events/custom-widget.json) and prints the HTML. It reads TABLE_NAME (the
results table, required) and MAP_MAX_RECORDS from the environment.

`

// build wires the widget from the environment once per execution
// environment: the table to read and how many records at most, a logger,
// the AWS client.
func build(ctx context.Context, getenv func(string) string, logs io.Writer) (*widget.Widget, error) {
	logger := lambdarun.NewLogger(logs, getenv(envvars.LogLevel))
	table := getenv(envvars.TableName)
	if table == "" {
		return nil, fmt.Errorf("%s is not set: the results table to draw", envvars.TableName)
	}
	maxRecords := widget.DefaultMaxRecords
	if s := getenv(envvars.MapMaxRecords); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a whole number of records, at least 1", envvars.MapMaxRecords, s)
		}
		maxRecords = n
	}
	cfg, err := lambdarun.LoadAWSConfig(ctx, logger)
	if err != nil {
		return nil, err
	}
	store := ledger.New(dynamodb.NewFromConfig(cfg, lambdarun.DynamoDBOptions), table)
	return widget.New(store, func(o *widget.Options) {
		o.MaxRecords = maxRecords
		o.Logger = logger
	}), nil
}
