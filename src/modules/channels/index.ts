// The channels module's only public file: what other modules (the app, the voice gateway) use.

export { VOICE_CONNECTOR_KEY, type ChannelSetup, type ConfiguredChannel } from './channel-config';
export { ChannelsModule, channelSetupOf } from './channels.module';
export { ChannelInput, type ChannelInputOptions, type InputLog } from './input/channel-input';
