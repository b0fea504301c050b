package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// runModels: geolocate models [--json]. The key is optional: without one
// the service lists public models only.
func runModels(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("models", "")
	var conn connection
	asJSON := fs.Bool("json", false, "print the list as JSON")
	conn.register(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	client, err := conn.client(ctx, c, false)
	if err != nil {
		return err
	}
	if c.key == "" {
		// Without a key the service lists its public models only: say so,
		// or a shorter list reads as models gone.
		fmt.Fprintf(c.stderr, "geolocate: models: no API key, so public models only: the whitelist models granted to your organisation are listed with %s (or --secret-id)\n", envvars.APIKey)
	}
	out, err := client.Models(ctx, &geoapi.ModelsInput{})
	if geoapi.KeyNotAccepted(err) {
		// The service lists models only to callers without a key (the
		// public backend): the public ones, then, and say what is missing.
		fmt.Fprintln(c.stderr, "geolocate: models: the service lists models only without an API key (it takes keys only for predictions): "+
			"showing the public models; whitelist models granted to your organisation are not listed")
		out, err = client.Models(ctx, &geoapi.ModelsInput{Anonymous: true})
	}
	if err != nil {
		return describe(err)
	}
	if *asJSON {
		type modelJSON struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Access string `json:"access,omitempty"`
			Type   string `json:"type,omitempty"`
		}
		list := make([]modelJSON, 0, len(out.Models))
		for _, m := range out.Models {
			list = append(list, modelJSON{m.ID, string(m.Status), m.AccessClass, m.Type})
		}
		return json.NewEncoder(c.stdout).Encode(list)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tACCESS\tTYPE")
	for _, m := range out.Models {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.ID, m.Status, dash(m.AccessClass), dash(m.Type))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
