package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage"
	"github.com/geolocate-aws/geolocate/pkg/local/scenario"
)

// The demo's local bucket and table.
const (
	demoBucket = "geolocate-demo-uploads"
	demoTable  = "geolocate-demo-results"
)

// writeDashboardDemo is geolocate local --dashboard-demo FILE: it starts
// the local parts and draws the stack's dashboard from a simulated busy
// day (scenario.WriteDemoDashboard); with widgetsPath, also the page's
// widget list (dashpage.WriteWidgets), which a screenshot is committed with.
func writeDashboardDemo(ctx context.Context, path, widgetsPath, templatePath string, progress io.Writer) (err error) {
	template, err := os.ReadFile(templatePath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--dashboard-demo: no synthesized template at %s: run `make synth` first (or pass --template)", templatePath)
	}
	if err != nil {
		return fmt.Errorf("--dashboard-demo: read template: %w", err)
	}
	fmt.Fprintln(progress, "starting  S3 (gofakes3) and DynamoDB Local")
	s3srv, err := awsparts.StartS3()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s3srv.Close()) }()
	if err := s3srv.CreateBucket(ctx, demoBucket); err != nil {
		return err
	}
	db, err := awsparts.StartDynamoDB(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	if err := db.CreateTable(ctx, demoTable); err != nil {
		return err
	}
	err = scenario.WriteDemoDashboard(ctx, path, scenario.DemoOptions{
		Template: template, StackName: defaultStackName,
		S3: s3srv.Client(), Bucket: demoBucket, DynamoDB: db.Client(), Table: demoTable,
		Progress: progress,
	})
	if err != nil {
		return fmt.Errorf("--dashboard-demo: %w", err)
	}
	fmt.Fprintf(progress, "dashboard %s\n", path)
	if widgetsPath != "" {
		if err := dashpage.WriteWidgets(widgetsPath, template); err != nil {
			return fmt.Errorf("--widgets: %w", err)
		}
		fmt.Fprintf(progress, "widgets   %s\n", widgetsPath)
	}
	return nil
}
