// Loaded pools kept for the cells that load the same prefill
// (`pmindex bench --reuse-prefill`). A study runs many cells on one load:
// every workload and repetition of an index. At 10M records the load takes
// 15-45 s and the workload 5 s, so loading once per cell made the load most
// of a study's time.
//
// With reuse on, the first cell of a prefill loads it as usual, closes its
// index cleanly and keeps the pool file(s) aside as the image; it and every
// later cell with the same prefill (the same index, parameters, mode,
// records, key space, keys, values, seed and threads) copies that image to
// its own pool path and opens it. So every cell, the first too, runs on an
// index reopened from a copy of the same load, and reports that load's
// figures (load time, flushes, space). A cell's writes change its copy only.
//
// The images live next to the pool, as scratch pools (removed when the
// cache goes, a leftover of a killed run removed by the next run at the same
// path), and hold only the pool's written pages, as do the copies handed
// to cells (a new pool reserves its whole size; a copy gets a margin of
// 1 GiB of free room for the run's writes instead). They take room on the
// pool's file system (RAM, for /dev/shm): the least recently used image
// goes when a new pool or a copy would not fit beside the others with a
// margin of room and memory; an image that does not fit even alone is not
// kept, and its cells load as without reuse.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include "runner.hpp"
#include "scratch_pool.hpp"

namespace pmindex::bench {

class prefill_cache {
 public:
  // What a load left: its figures (the load's part of run_result) and each
  // instance's record count.
  struct image {
    std::string key;
    std::vector<scratch_pool> files;  // one per instance, as the pool paths
    uint64_t bytes = 0;               // allocated bytes of the files
    run_result loaded;
    std::vector<uint64_t> prior;
    bool counts_compares = false;  // the indexes count key comparisons
  };

  prefill_cache() = default;
  prefill_cache(const prefill_cache&) = delete;
  prefill_cache& operator=(const prefill_cache&) = delete;

  // The image of `key`, copied to `paths` (one per instance, each already
  // prepared as a scratch pool); null when none is kept. Makes room for
  // the copies first by dropping other images.
  const image* restore(const std::string& key, const std::vector<std::string>& paths);

  // Drops kept images until a new pool of `size` bytes (reserved whole
  // when made) fits at `path` beside the others, or none is left.
  void room_for_pool(const std::string& path, uint64_t size);

  // Keeps the closed pools at `paths` as the image of `key` and puts a
  // copy of them at `paths` for the cell that loaded them. False when no
  // copy fits beside the image: the pools stay at `paths`, not kept.
  bool keep(const std::string& key, const std::vector<std::string>& paths, const run_result& loaded,
            const std::vector<uint64_t>& prior, bool counts_compares);

  // Maps in, writable, the pages of the pool file at `path` (mapped at
  // `base`, `len` bytes) that hold data: a reopened pool then meets its
  // first operations as a loaded one does (the load had faulted in every
  // page it wrote), not with a page fault per page touched.
  static void populate(const std::string& path, char* base, uint64_t len);

  // Copies a (sparse) file: only its pages that hold data (not all
  // zeros); the rest stays holes. Throws error(io).
  static void copy_file(const std::string& from, const std::string& to);

 private:
  // Drops least recently used images, other than `spare`, until the pool
  // file system at `dir` has `need` bytes free beside a margin, and (on a
  // RAM disk) memory to spare. False when even that is not enough.
  bool make_room(const std::string& dir, uint64_t need, const image* spare);

  std::list<image> images_;  // most recently used first
  uint64_t next_ = 0;         // names the next image's files
};

}  // namespace pmindex::bench
