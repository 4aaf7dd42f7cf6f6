/* Fuzzes the Hugging Face config.json reader (src/spec/hf.c). */
#include "fuzz.h"
#include "orrery/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orr_model m;
    orr_err err;
    orr_model_load_hf(&m, fuzz_file("config.json", data, size), &err);
    return 0;
}
