// Package settings is the table of the deployment's settings: one
// declaration per setting (its CDK context key, the environment variable
// the functions read it from, its type, default, bounds or allowed values,
// the functions that receive it and one line of documentation), and the
// one typed Reader that parses them from either source.
//
// Everything else is derived from the table: the CDK app (infra/config.go)
// reads and validates the context with FromContext and refuses a key no
// setting declares (Unknown); infra/functions.go writes each function's
// environment (Setting.Functions); each function's LoadConfig reads its
// environment with FromEnv, unset meaning the table's default; the local
// rig passes the shell's values through (Passed); cdk.json's context
// defaults and docs/configuration.md's table are checked against it by
// table_test.go, which prints the expected text when they drift.
//
// It lives in pkg/shared beside envvars, whose constants stay the one
// spelling of each variable name (a setting's Env points at one): infra
// and the functions already import pkg/shared, and many packages name
// those variables, so they keep compiling unchanged.
//
// # Adding a setting
//
//  1. Declare it in table.go: `var MySetting = add(Setting{Key: "mySetting",
//     Env: envvars.MySetting, Kind: Int, Default: "5", Min: 1, Max: 10,
//     Functions: Predictor, Doc: "..."})`, adding the variable's name to
//     pkg/shared/envvars when a function reads it.
//  2. Read it where it is used: `r.Int(settings.MySetting)` in infra's
//     loadConfig and in the function's LoadConfig; infra writes it into the
//     environment of every function in Functions.
//  3. Add its default to cdk.json and its row to docs/configuration.md:
//     `go test ./pkg/shared/settings/` fails and prints both lines.
//
// No other list names it: the unknown-key check, the local rig's pass
// through and the documentation tests all read the table.
package settings
