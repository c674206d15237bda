package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// output is the -o flag of every command that prints a result: table (the
// default, for people), json or yaml. It is a pflag.Value so that a bad
// value is a flag error, and so a usage error, before the command runs.
type output string

const (
	outputTable output = "table"
	outputJSON  output = "json"
	outputYAML  output = "yaml"
)

func (o *output) String() string { return string(*o) }

// Type is the placeholder --help shows: the accepted values.
func (o *output) Type() string { return "table|json|yaml" }

func (o *output) Set(s string) error {
	switch v := output(s); v {
	case outputTable, outputJSON, outputYAML:
		*o = v
		return nil
	}
	return errors.New("the accepted values are table, json and yaml")
}

// addOutput adds -o to c, with usage saying what each format prints.
func addOutput(c *cobra.Command, usage string) *output {
	o := outputTable
	c.Flags().VarP(&o, "output", "o", usage)
	return &o
}

// write prints v as JSON or YAML, or calls table for the table.
func (o output) write(w io.Writer, v any, table func(io.Writer) error) error {
	switch o {
	case outputJSON:
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(data))
		return err
	case outputYAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	default:
		return table(w)
	}
}
