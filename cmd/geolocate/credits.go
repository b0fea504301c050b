package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// runCredits: geolocate credits [--json] [--remaining-path P].
func runCredits(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("credits", "")
	var conn connection
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	path := fs.String("remaining-path", "", "dotted JSON path of the remaining credits in the summary (default: "+
		envvars.CreditsPath+", else recognised automatically)")
	conn.register(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *path == "" {
		*path = c.getenv(envvars.CreditsPath)
	}
	client, err := conn.client(ctx, c, true)
	if err != nil {
		return err
	}
	out, err := client.Credits(ctx, &geoapi.CreditsInput{RemainingPath: *path})
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
	fmt.Fprintf(tw, "remaining_path\t%s\n", out.RemainingPath)
	return tw.Flush()
}
