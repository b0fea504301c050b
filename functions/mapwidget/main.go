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
	"log/slog"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/geomap/widget"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func main() {
	logger := lambdarun.NewLogger(os.Stderr, os.Getenv(envvars.LogLevel))
	w, err := build(context.Background(), os.Getenv, logger)
	if err != nil {
		logger.Error("map widget cold start failed", "error", err.Error())
		fmt.Fprintf(os.Stderr, "mapwidget: %v\n", err)
		os.Exit(1)
	}
	lambdarun.Main("mapwidget", w.Handle)
}

// build wires the widget from the environment: the table to read and how
// many records at most.
func build(ctx context.Context, getenv func(string) string, logger *slog.Logger) (*widget.Widget, error) {
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
