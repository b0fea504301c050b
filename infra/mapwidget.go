package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The map widget's function (functions/mapwidget): CloudWatch invokes it
// with the viewer's credentials when the dashboard draws its custom widget.
const mapWidgetAssetDir = "mapwidget"

// Its size, from the measurements in docs/map.md (BenchmarkWidgetLedger10k:
// reading and drawing the widget's cap of 10,000 records). Memory also buys
// CPU on Lambda (a full vCPU at 1,769 MB): 512 MB keeps the heap of 10,000
// decoded records well inside the limit and the drawing about a second.
// The timeout bounds a slow read: the console gives up on a widget long
// before Lambda's maximum.
const (
	mapWidgetMemoryMB       = 512
	mapWidgetTimeoutSeconds = 30
	mapWidgetMaxRecords     = 10000
)

// mapWidgetTableActions: the widget reads records by status and time
// through the by-status index; it neither writes nor reads the table itself.
var mapWidgetTableActions = []string{"dynamodb:Query"}

// newMapWidget creates the function behind the dashboard's map.
func newMapWidget(stack awscdk.Stack, p *pipeline, assets functionAssets) awslambda.Function {
	cfg := p.cfg
	env := map[string]*string{
		envvars.TableName:     p.table.TableName(),
		envvars.MapMaxRecords: jsii.String(strconv.Itoa(mapWidgetMaxRecords)),
		envvars.LogLevel:      jsii.String(cfg.LogLevel),
		envGoMemLimit:         jsii.String(goMemLimit(mapWidgetMemoryMB)),
	}
	role := newFunctionRole(stack, "MapWidgetRole", "Map widget: queries the results table's by-status index")
	logs := newFunctionLogGroup(stack, "MapWidgetLogs", cfg, role)
	fn := newGoFunction(stack, "MapWidget", &awslambda.FunctionProps{
		Description: jsii.String("Draws the dashboard's time range of predictions on a world map (CloudWatch custom widget)"),
		Code:        assets.code(mapWidgetAssetDir),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(mapWidgetTimeoutSeconds)),
		MemorySize:  jsii.Number(mapWidgetMemoryMB),
		Role:        role,
		LogGroup:    logs,
		Environment: &env,
	})
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(mapWidgetTableActions...),
		Resources: jsii.Strings(*p.table.TableArn() + "/index/" + tableschema.StatusIndex),
	}))
	return fn
}

// mapWidgetHelp is the text above the map: CloudWatch draws nothing in a
// custom widget until someone allows it ("Custom Widgets won't run by
// default in a dashboard ... you must explicitly allow a custom widget to
// run", CloudWatch, custom widgets), so a blank map says what to do.
const mapWidgetHelp = "**The map below is blank?** CloudWatch runs a custom widget only once it is allowed: " +
	"choose **Allow always** (or **Execute once**) on the widget, which needs `lambda:InvokeFunction` on the map's function. " +
	"If it still fails, the widget shows the function's error; its logs are in the MapWidgetLogs log group. See docs/map.md (When the map does not show)."

// mapWidgetOnDashboard is the dashboard's custom widget: the map of the records of
// the dashboard's time range, redrawn when the range changes.
func mapWidgetOnDashboard(fn awslambda.Function) []awscloudwatch.IWidget {
	help := awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
		Markdown: jsii.String(mapWidgetHelp), Width: jsii.Number(24), Height: jsii.Number(2),
	})
	return []awscloudwatch.IWidget{help, awscloudwatch.NewCustomWidget(&awscloudwatch.CustomWidgetProps{
		FunctionArn:             fn.FunctionArn(),
		Title:                   jsii.String("Where the photos are (succeeded records of the dashboard's range; radius to scale, EXIF errors dashed)"),
		Width:                   jsii.Number(24),
		Height:                  jsii.Number(12),
		Params:                  map[string]any{"colorBy": "status"},
		UpdateOnRefresh:         jsii.Bool(true),
		UpdateOnResize:          jsii.Bool(true),
		UpdateOnTimeRangeChange: jsii.Bool(true),
	})}
}
