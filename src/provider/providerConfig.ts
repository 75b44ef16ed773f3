/**
 * The HTTP providers' settings live with the other settings (config/ is a leaf); this module
 * keeps the providers' imports short.
 */
export * from "../config/HttpProviderConfig"
