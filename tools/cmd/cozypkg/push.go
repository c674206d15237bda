package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote/auth"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
)

func newPush() *cobra.Command {
	var plainHTTP, passwordStdin bool
	var sourceTag, username string
	var format *output
	c := &cobra.Command{
		Use:   "push <catalog-dir|oci-layout-dir> <host/repository[:tag]>",
		Short: "Publish a catalog to an OCI registry",
		Long: `Push builds a catalog directory (it has catalog.yaml) in memory, or reads an
OCI image-layout directory (it has oci-layout), checks the artifact the way the
platform will (every digest, the media types, the catalog metadata, the chart
archives, the definitions), and copies it to the registry. The destination tag defaults to the
catalog version (from a directory) or the source tag (from a layout). From a
layout the source tag is --source-tag, else the destination's tag if the layout
has it, else the layout's only tag.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts := artifact.RemoteOptions{PlainHTTP: plainHTTP}
			if passwordStdin && username == "" {
				return usagef("--password-stdin needs --username")
			}
			if strings.Contains(args[1], "@") {
				return usagef("%s: push to a tag, not a digest: the digest is the artifact's own", args[1])
			}
			// A bad reference is a usage error, found before the password is read.
			if _, _, err := artifact.NewRepository(args[1], opts); err != nil {
				return &usageError{err}
			}
			if passwordStdin {
				password, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				opts.Credential = auth.Credential{Username: username, Password: strings.TrimRight(string(password), "\r\n")}
			}
			repo, dstTag, err := artifact.NewRepository(args[1], opts)
			if err != nil {
				return err
			}
			src, srcTag, err := openSource(ctx, args[0], dstTag, sourceTag)
			if err != nil {
				return err
			}
			a, err := artifact.Pull(ctx, src, srcTag, nil, artifact.PullOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if dstTag == "" {
				dstTag = srcTag
			}
			p := &progress{w: cmd.ErrOrStderr()}
			if _, err := p.copy(ctx, src, srcTag, repo, dstTag); err != nil {
				return fmt.Errorf("push to %s: %w", repo.Reference.Registry+"/"+repo.Reference.Repository, err)
			}
			reference := repo.Reference.Registry + "/" + repo.Reference.Repository + ":" + dstTag
			return newResult(reference, a).print(cmd.OutOrStdout(), *format, "Pushed")
		},
	}
	c.Flags().BoolVar(&plainHTTP, "plain-http", false, "use HTTP instead of HTTPS (loopback and test registries)")
	c.Flags().StringVar(&sourceTag, "source-tag", "", "tag to push from an OCI layout")
	c.Flags().StringVarP(&username, "username", "u", "", "registry user name")
	c.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the registry password from stdin")
	format = addOutput(c, "the reference and digest (table), or also every chart and definition file (json, yaml)")
	return c
}

// openSource returns the artifact store of path, a catalog directory
// (built in memory, tagged dstTag or its version) or an OCI layout, and
// the tag to push from it.
func openSource(ctx context.Context, path, dstTag, sourceTag string) (oras.ReadOnlyTarget, string, error) {
	if err := checkLinks(path); err != nil {
		return nil, "", err
	}
	if exists(filepath.Join(path, artifact.CatalogFile)) {
		if err := checkCatalogLinks(path); err != nil {
			return nil, "", err
		}
		staged := memory.New()
		res, err := build.Build(ctx, path, staged, build.Options{Tag: dstTag})
		if err != nil {
			return nil, "", err
		}
		return staged, res.Tag, nil
	}
	if !exists(filepath.Join(path, "oci-layout")) {
		return nil, "", fmt.Errorf("%s is neither a catalog directory (no %s) nor an OCI image layout (no oci-layout)", path, artifact.CatalogFile)
	}
	if err := checkLinks(path, path); err != nil {
		return nil, "", err
	}
	store, err := oci.NewFromFS(ctx, os.DirFS(path))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	var tags []string
	if err := store.Tags(ctx, "", func(page []string) error { tags = append(tags, page...); return nil }); err != nil {
		return nil, "", err
	}
	switch {
	case sourceTag != "":
		return store, sourceTag, nil
	case dstTag != "" && slices.Contains(tags, dstTag):
		return store, dstTag, nil
	case len(tags) == 1:
		return store, tags[0], nil
	case len(tags) == 0:
		return nil, "", fmt.Errorf("%s: the layout has no tagged artifact; build one with `cozypkg build --oci-layout %s`", path, path)
	default:
		return nil, "", fmt.Errorf("%s: the layout has the tags %s: choose one with --source-tag", path, strings.Join(tags, ", "))
	}
}
