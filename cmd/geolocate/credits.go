package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// runCredits: geolocate credits [--json] [--remaining-path P], or
// geolocate credits --declare N [--stack NAME | --table T].
func runCredits(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("credits", "")
	var (
		conn connection
		loc  stackLocator
	)
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	path := fs.String("remaining-path", "", "dotted JSON path of the remaining credits in the summary (default: "+
		envvars.CreditsPath+", else recognised automatically)")
	declare := fs.String("declare", "", "store this balance, read in the service's web application, as the start of the monitor's estimate "+
		"(for a service whose credit summary takes no API keys); writes to the stack's results table (--stack or --table)")
	conn.register(fs)
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *declare != "" {
		return declareCredits(ctx, c, &loc, *declare)
	}
	if *path == "" {
		*path = c.getenv(envvars.CreditsPath)
	}
	client, err := conn.client(ctx, c, true)
	if err != nil {
		return err
	}
	out, err := client.Credits(ctx, &geoapi.CreditsInput{RemainingPath: *path})
	if geoapi.KeyNotAccepted(err) {
		return creditsRefuseKeys(ctx, client, err)
	}
	if err != nil {
		return describe(err)
	}
	figures := []struct {
		name string
		v    *float64
	}{
		{"remaining", out.Remaining},
		{"subscription_allowance", out.SubscriptionAllowance},
		{"subscription_used", out.SubscriptionUsed},
		{"subscription_remaining", out.SubscriptionRemaining},
		{"topup_balance", out.TopUpBalance},
		{"used", out.Used},
		{"total", out.Total},
	}
	if *asJSON {
		m := map[string]any{"remaining_path": out.RemainingPath}
		for _, f := range figures {
			if f.v != nil {
				m[f.name] = *f.v
			}
		}
		return json.NewEncoder(c.stdout).Encode(m)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	for _, f := range figures {
		if f.v != nil {
			fmt.Fprintf(tw, "%s\t%s\n", f.name, strconv.FormatFloat(*f.v, 'f', -1, 64))
		}
	}
	// Where in the body "remaining" was read (remaining_path) is for
	// --json: in the table it read as an internal line.
	return tw.Flush()
}

// creditsRefuseKeys explains a credit summary that takes no API keys (the
// public backend accepts keys only for predictions): it says whether the
// key itself is good, checked where keys are accepted at no cost, and
// where the balance can be read instead.
func creditsRefuseKeys(ctx context.Context, client *geoapi.Client, refusal error) error {
	const instead = "read the balance in the service's web application, or let the pipeline watch it: geolocate status --stack NAME " +
		"(credits consumed from the records, 402s, and a balance you declare with geolocate credits --declare)"
	var why string
	var api *geoapi.APIError
	if errors.As(refusal, &api) && api.Detail != "" {
		why = " (" + api.Detail + ")"
	}
	_, err := client.CheckKey(ctx, nil)
	var ue *geoapi.UnauthorizedError
	switch {
	case err == nil:
		return fmt.Errorf("the service does not let API keys read the credit summary%s; your key is fine: the prediction endpoint accepts it (checked without a prediction, nothing charged); %s", why, instead)
	case errors.As(err, &ue):
		return fmt.Errorf("the service does not let API keys read the credit summary%s, and the prediction endpoint refuses this key too: %v", why, describe(err))
	}
	return fmt.Errorf("the service does not let API keys read the credit summary%s; whether your key is good could not be checked (%v); %s", why, describe(err), instead)
}

// declareCredits stores a balance the operator read elsewhere as the
// anchor of the monitor's credit estimate: the monitor of the stack counts
// the credits the records show consumed from now on, and the credit
// alarms rest on that estimate while the service refuses keys on its
// summary.
func declareCredits(ctx context.Context, c *cli, loc *stackLocator, raw string) error {
	balance, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || geoapi.CheckCreditFigure(balance) != nil {
		return usageError{fmt.Errorf("--declare %q: give the balance as a number of credits, 0 or more, at most 10^15", raw)}
	}
	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		return err
	}
	// The monitor's history is per pipeline, named after the stack
	// (PIPELINE_NAME in a local run).
	pipeline := strings.TrimSpace(c.getenv(envvars.PipelineName))
	if pipeline == "" {
		pipeline = loc.stack
	}
	now := time.Now()
	h := monitor.NewHistory(clients.tables, table, pipeline, 0)
	if err := h.Declare(ctx, monitor.Declared{Remaining: balance, At: now, By: "geolocate credits --declare"}); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "declared %s credits for %s at %s: the monitor's next run estimates the balance from it, minus the credits the records show consumed since\n",
		strconv.FormatFloat(balance, 'f', -1, 64), pipeline, now.UTC().Format(time.RFC3339))
	return nil
}
