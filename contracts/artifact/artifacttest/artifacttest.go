package artifacttest

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"cozystack.io/contracts/artifact"
)

// filePart is the size of each data file in a RandomChart, within Helm's
// 5 MiB limit per file and safetar's default limits.
const filePart = 4 << 20

// RandomChart writes, into a new file in dir, a chart archive named name:
// a Chart.yaml (version 0.1.0) and size bytes of random data from seed
// (ChaCha8, so the same seed gives the same bytes) in files of 4 MiB, in
// a gzip stream without compression (fast, and the archive is about size
// bytes). It returns the file's path and its descriptor (ChartMediaType,
// digest and size; no annotations).
func RandomChart(dir, name string, size int64, seed uint64) (string, ocispec.Descriptor, error) {
	f, err := os.CreateTemp(dir, name+"-*.tgz")
	if err != nil {
		return "", ocispec.Descriptor{}, err
	}
	defer f.Close()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	cw := &countWriter{w: bw}
	zw, err := gzip.NewWriterLevel(cw, gzip.NoCompression)
	if err != nil {
		return "", ocispec.Descriptor{}, err
	}
	tw := tar.NewWriter(zw)
	add := func(file string, n int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + file, Mode: 0o644, Size: n, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := io.CopyN(tw, r, n)
		return err
	}
	chartYAML := fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\n", name)
	if err := add("Chart.yaml", int64(len(chartYAML)), strings.NewReader(chartYAML)); err != nil {
		return "", ocispec.Descriptor{}, err
	}
	var key [32]byte
	copy(key[:], name)
	key[31] = byte(seed)
	key[30] = byte(seed >> 8)
	rng := rand.NewChaCha8(key)
	for i := 0; size > 0; i++ {
		n := min(size, filePart)
		if err := add(fmt.Sprintf("files/data-%03d.bin", i), n, rng); err != nil {
			return "", ocispec.Descriptor{}, err
		}
		size -= n
	}
	for _, c := range []io.Closer{tw, zw} {
		if err := c.Close(); err != nil {
			return "", ocispec.Descriptor{}, err
		}
	}
	if err := bw.Flush(); err != nil {
		return "", ocispec.Descriptor{}, err
	}
	return f.Name(), ocispec.Descriptor{MediaType: artifact.ChartMediaType, Digest: digest.NewDigest(digest.SHA256, h), Size: cw.n}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
