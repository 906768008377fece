package storage

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// The block format of the files the Pebble engine writes: how each block
// is compressed (Options.Compression) and how big it is before that
// (Options.BlockSize). A scan that misses the block cache pays per block
// (a read, a cache allocation and insertion, an eviction) and per byte
// (the decompression); a point read decodes one whole block.

// Compression names how the Pebble engine compresses the blocks of the
// files it writes (Options.Compression). Each block records how it was
// compressed, so a data directory written under one setting reads under
// any other; a change applies to the files written from then on (new
// flushes, compactions and ingested staging files).
type Compression string

const (
	// CompressionDefault is DefaultCompression.
	CompressionDefault Compression = ""
	// CompressionNone stores blocks as they are: no decompression on a
	// block-cache miss, at the most disk.
	CompressionNone Compression = "none"
	// CompressionSnappy is Snappy, Pebble's own default.
	CompressionSnappy Compression = "snappy"
	// CompressionMinLZ is MinLZ at its fastest level: about Snappy's
	// ratio, faster to decompress.
	CompressionMinLZ Compression = "minlz"
	// CompressionZstd is Zstandard at level 3: the smallest files, the
	// slowest to write and read.
	CompressionZstd Compression = "zstd"
)

// DefaultCompression is the setting of an Options.Compression left empty.
// Snappy, measured against the others at SF 1 (bench/RESULTS.md, issue
// 21): none is somewhat faster to scan at 32 KiB blocks (geometric mean
// 1.88 and 2.60 against 2.80 and 2.85, within this machine's noise in
// the second round) for 2.1 times the disk (3.35 GB against 1.57); MinLZ
// scanned like Snappy at 4 KiB blocks (4.12, 4.06 against 4.22, 4.14);
// zstd took 301 s to load against 98–121 s and scanned 1.5–3 times
// slower, for 1.50 GB against 1.87.
const DefaultCompression = CompressionSnappy

// compressions are the settings by name, with Pebble's profile of each.
var compressions = map[Compression]*sstable.CompressionProfile{
	CompressionNone:   sstable.NoCompression,
	CompressionSnappy: sstable.SnappyCompression,
	CompressionMinLZ:  sstable.MinLZCompression,
	CompressionZstd:   sstable.ZstdCompression,
}

// ParseCompression reads a setting's name (case-insensitive; empty is
// the default).
func ParseCompression(s string) (Compression, error) {
	c := Compression(strings.ToLower(strings.TrimSpace(s)))
	if c == CompressionDefault {
		return DefaultCompression, nil
	}
	if compressions[c] == nil {
		return "", fmt.Errorf("storage: compression %q is none of none, snappy, minlz, zstd", s)
	}
	return c, nil
}

// DefaultBlockSize is the target size of a data block before
// compression when Options.BlockSize is 0: Pebble's own, 4 KiB. Bigger
// blocks scan faster and smaller blocks serve lookups better; at SF 1
// with the default 256 MiB cache (bench/RESULTS.md, issue 21):
//   - 32 KiB: the SELECT ratios to PostgreSQL of the scan-bound Q1, Q6,
//     Q12, Q14 and Q15 went from 4.22 and 4.14 to 2.80 and 2.85
//     (geometric mean, two alternating rounds); lineitem's COPY from
//     about 80 s to 37 s; the data directory from 1.87 to 1.57 GB;
//   - but the index-lookup joins Q2, Q3, Q4, Q5, Q7, Q9, Q10 and Q21 went
//     from 2.96 and 3.02 to 3.95 and 4.30 (Q9 13-14 s to 26-28 s): each
//     random row fetch that misses the cache decodes a whole block.
//
// So the default stays 4 KiB until lookups read less than a block.
const DefaultBlockSize = 4 << 10

// maxBlockSize bounds Options.BlockSize: Pebble's blocks address their
// restart points with 32-bit offsets, and a point read decodes a whole
// block.
const maxBlockSize = 1 << 20

// CheckBlockSize refuses an Options.BlockSize out of range.
func CheckBlockSize(n int) error {
	if n < 1<<10 || n > maxBlockSize {
		return fmt.Errorf("storage: block size %d is not between 1 KiB and %d KiB", n, maxBlockSize>>10)
	}
	return nil
}

// applyBlockFormat sets every level of po to compression c and data
// blocks of blockSize bytes (0: the defaults).
func applyBlockFormat(po *pebble.Options, c Compression, blockSize int) error {
	if c == CompressionDefault {
		c = DefaultCompression
	}
	p := compressions[c]
	if p == nil {
		return fmt.Errorf("storage: compression %q is none of none, snappy, minlz, zstd", c)
	}
	if blockSize == 0 {
		blockSize = DefaultBlockSize
	}
	if err := CheckBlockSize(blockSize); err != nil {
		return err
	}
	for i := range po.Levels {
		po.Levels[i].Compression = func() *sstable.CompressionProfile { return p }
		po.Levels[i].BlockSize = blockSize
	}
	return nil
}
