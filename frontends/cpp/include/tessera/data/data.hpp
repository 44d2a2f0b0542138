// tessera/data/data.hpp - tessera::data, datasets and loading (PyTorch's
// torch.utils.data). Only re-exports; each concept lives in its own header:
//   example.hpp              Example<Data, Target>
//   dataset.hpp              Dataset<Example>, TensorDataset
//   subset.hpp               Subset, ConcatDataset, random_split
//   sampler.hpp              Sampler, SequentialSampler, RandomSampler,
//                            WeightedRandomSampler
//   distributed_sampler.hpp  DistributedSampler
//   batch_sampler.hpp        BatchSampler
//   collate.hpp              default_collate, Collate<E>
//   transfer.hpp             moving batches to a device
//   dataloader.hpp           DataLoader, DataLoaderOptions
#pragma once

#include "tessera/data/batch_sampler.hpp"        // IWYU pragma: export
#include "tessera/data/collate.hpp"              // IWYU pragma: export
#include "tessera/data/dataloader.hpp"           // IWYU pragma: export
#include "tessera/data/dataset.hpp"              // IWYU pragma: export
#include "tessera/data/distributed_sampler.hpp"  // IWYU pragma: export
#include "tessera/data/example.hpp"              // IWYU pragma: export
#include "tessera/data/sampler.hpp"              // IWYU pragma: export
#include "tessera/data/subset.hpp"               // IWYU pragma: export
#include "tessera/data/transfer.hpp"             // IWYU pragma: export
