// Everything a C++ user of braze needs: #include "runtime/braze.h".
#pragma once

#include "graph/serialize.h"
#include "runtime/autodiff.h"
#include "runtime/context.h"
#include "runtime/lower.h"
#include "runtime/ops.h"
#include "runtime/tensor.h"
#include "runtime/transfer.h"
